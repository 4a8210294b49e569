// SPDX-License-Identifier: MIT
// The status words' one table each, read both ways.
#include "core/status.hpp"

#include "util/strings.hpp"

#include <array>
#include <string>
#include <utility>

namespace rig::core {

namespace {

template <typename E, size_t N> using Words = std::array<std::pair<E, std::string_view>, N>;

constexpr Words<BuildOutcome, 3> k_build_outcomes{{
    {BuildOutcome::ok, "ok"},
    {BuildOutcome::build_failed, "build-failed"},
    {BuildOutcome::config_error, "config-error"},
}};
constexpr Words<RunStatus, 3> k_run_statuses{{
    {RunStatus::running, "running"},
    {RunStatus::finished, "finished"},
    {RunStatus::interrupted, "interrupted"},
}};
constexpr Words<HostStatus, 2> k_host_statuses{{
    {HostStatus::up, "up"},
    {HostStatus::dropped, "dropped"},
}};
constexpr Words<BisectStatus, 8> k_bisect_statuses{{
    {BisectStatus::running, "running"},
    {BisectStatus::culprit, "culprit"},
    {BisectStatus::unverified, "unverified"},
    {BisectStatus::inconclusive, "inconclusive"},
    {BisectStatus::not_reproducible, "not-reproducible"},
    {BisectStatus::stopped, "stopped"},
    {BisectStatus::capped, "capped"},
    {BisectStatus::interrupted, "interrupted"},
}};
constexpr Words<StepRole, 6> k_step_roles{{
    {StepRole::bad_endpoint, "bad-endpoint"},
    {StepRole::good_endpoint, "good-endpoint"},
    {StepRole::bisect, "bisect"},
    {StepRole::verify_culprit, "verify-culprit"},
    {StepRole::verify_parent, "verify-parent"},
    {StepRole::verify_revert, "verify-revert"},
}};
constexpr Words<Verdict, 4> k_verdicts{{
    {Verdict::good, "good"},
    {Verdict::bad, "bad"},
    {Verdict::skip, "skip"},
    {Verdict::unsure, "unsure"},
}};
constexpr Words<Backend, 3> k_backends{{
    {Backend::qemu, "qemu"},
    {Backend::libvirt, "libvirt"},
    {Backend::slurm, "slurm"},
}};

constexpr Words<HeadStatus, 5> k_head_statuses{{
    {HeadStatus::testing, "testing"},
    {HeadStatus::good, "good"},
    {HeadStatus::bad, "bad"},
    {HeadStatus::skipped, "skipped"},
    {HeadStatus::suspect, "suspect"},
}};
constexpr Words<FindingStatus, 6> k_finding_statuses{{
    {FindingStatus::suspect, "suspect"},
    {FindingStatus::unconfirmed, "unconfirmed"},
    {FindingStatus::reported, "reported"},
    {FindingStatus::linked, "linked"},
    {FindingStatus::inconclusive, "inconclusive"},
    {FindingStatus::stopped, "stopped"},
}};
constexpr Words<RegressionStatus, 2> k_regression_statuses{{
    {RegressionStatus::open, "open"},
    {RegressionStatus::fixed, "fixed"},
}};
constexpr Words<Figure, 3> k_figures{{
    {Figure::duration, "duration"},
    {Figure::cpu, "cpu"},
    {Figure::metric, "metric"},
}};

template <typename E, size_t N> std::string_view word(const Words<E, N>& words, E value) {
    for (const auto& [known, text] : words)
        if (known == value)
            return text;
    return "?";
}

// A table's words in its order.
template <typename E, size_t N> std::vector<std::string> texts(const Words<E, N>& words) {
    std::vector<std::string> out;
    for (const auto& [value, text] : words)
        out.emplace_back(text);
    return out;
}

template <typename E, size_t N>
Expected<E> parse(const Words<E, N>& words, std::string_view text, const char* what) {
    for (const auto& [value, known] : words)
        if (known == text)
            return value;
    return fail(ErrorKind::infra, "'" + std::string(text) + "' is not a " + what + " (" +
                                      util::join(texts(words), ", ") + ")");
}

} // namespace

std::string_view to_string(BuildOutcome outcome) {
    return word(k_build_outcomes, outcome);
}
std::string_view to_string(RunStatus status) {
    return word(k_run_statuses, status);
}
std::string_view to_string(HostStatus status) {
    return word(k_host_statuses, status);
}
std::string_view to_string(BisectStatus status) {
    return word(k_bisect_statuses, status);
}
std::string_view to_string(StepRole role) {
    return word(k_step_roles, role);
}
std::string_view to_string(Verdict verdict) {
    return word(k_verdicts, verdict);
}
std::string_view to_string(Backend backend) {
    return word(k_backends, backend);
}

Expected<BuildOutcome> parse_build_outcome(std::string_view text) {
    return parse(k_build_outcomes, text, "build outcome");
}
Expected<RunStatus> parse_run_status(std::string_view text) {
    return parse(k_run_statuses, text, "run status");
}
Expected<HostStatus> parse_host_status(std::string_view text) {
    return parse(k_host_statuses, text, "host status");
}
Expected<BisectStatus> parse_bisect_status(std::string_view text) {
    return parse(k_bisect_statuses, text, "bisect status");
}
Expected<StepRole> parse_step_role(std::string_view text) {
    return parse(k_step_roles, text, "bisect step role");
}
Expected<Verdict> parse_verdict(std::string_view text) {
    return parse(k_verdicts, text, "verdict");
}
Expected<Backend> parse_backend(std::string_view text) {
    return parse(k_backends, text, "backend");
}

std::string_view to_string(HeadStatus status) {
    return word(k_head_statuses, status);
}
std::string_view to_string(FindingStatus status) {
    return word(k_finding_statuses, status);
}
std::string_view to_string(RegressionStatus status) {
    return word(k_regression_statuses, status);
}
Expected<HeadStatus> parse_head_status(std::string_view text) {
    return parse(k_head_statuses, text, "watch head status");
}
Expected<FindingStatus> parse_finding_status(std::string_view text) {
    return parse(k_finding_statuses, text, "watch finding status");
}
Expected<RegressionStatus> parse_regression_status(std::string_view text) {
    return parse(k_regression_statuses, text, "regression status");
}
std::string_view to_string(Figure figure) {
    return word(k_figures, figure);
}
Expected<Figure> parse_figure(std::string_view text) {
    return parse(k_figures, text, "figure");
}

std::vector<std::string> backend_words() {
    return texts(k_backends);
}

} // namespace rig::core
