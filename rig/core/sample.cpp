// SPDX-License-Identifier: MIT
// Outcome names as stored and printed; a sample's codec; a sample's metrics by name.
#include "core/sample.hpp"

#include "util/json.hpp"

#include <array>
#include <utility>

namespace rig::core {

namespace {

constexpr std::array<std::pair<Outcome, std::string_view>, 13> k_outcomes{{
    {Outcome::ok, "ok"},
    {Outcome::errors, "errors"},
    {Outcome::workload_failed, "workload-failed"},
    {Outcome::kernel_panic, "kernel-panic"},
    {Outcome::boot_timeout, "boot-timeout"},
    {Outcome::workload_timeout, "workload-timeout"},
    {Outcome::console_silence, "console-silence"},
    {Outcome::infra_error, "infra-error"},
    {Outcome::aborted, "aborted"},
    {Outcome::build_failed, "build-failed"},
    {Outcome::time_limit, "time-limit"},
    {Outcome::disk_quota, "disk-quota"},
    {Outcome::wrong_output, "wrong-output"},
}};

} // namespace

std::string_view to_string(Outcome outcome) {
    for (const auto& [value, name] : k_outcomes)
        if (value == outcome)
            return name;
    return "?";
}

bool measured(Outcome outcome) {
    return outcome == Outcome::ok || outcome == Outcome::errors || outcome == Outcome::wrong_output;
}

std::string_view unit_of(Figure figure) {
    switch (figure) {
    case Figure::duration:
        return "s";
    case Figure::cpu:
        return "%";
    case Figure::metric:
        break;
    }
    return "";
}

std::vector<FigureValue> figure_values(const Sample& sample) {
    std::vector<FigureValue> out;
    if (!measured(sample.outcome))
        return out;
    if (sample.guest_seconds > 0)
        out.push_back({Figure::duration, {}, unit_of(Figure::duration), sample.guest_seconds});
    if (sample.wall_seconds > 0)
        out.push_back({Figure::cpu, {}, unit_of(Figure::cpu), sample.host_cpu_percent});
    for (const Metric& metric : sample.metrics)
        out.push_back({Figure::metric, metric.name, metric.unit, metric.value});
    return out;
}

std::optional<Outcome> parse_outcome(std::string_view text) {
    for (const auto& [value, name] : k_outcomes)
        if (name == text)
            return value;
    return std::nullopt;
}

std::string_view to_string(Severity severity) {
    return severity == Severity::warning ? "warning" : "error";
}

std::optional<Severity> parse_severity(std::string_view text) {
    if (text == "warning")
        return Severity::warning;
    if (text == "error")
        return Severity::error;
    return std::nullopt;
}

// An outcome a newer rig wrote reads as an infra error, as the coordinator always has.
void to_json(util::SortedJson& json, Outcome outcome) {
    json = to_string(outcome);
}
void from_json(const util::SortedJson& json, Outcome& outcome) {
    outcome = parse_outcome(json.get<std::string>()).value_or(Outcome::infra_error);
}
void to_json(util::SortedJson& json, Severity severity) {
    json = to_string(severity);
}
void from_json(const util::SortedJson& json, Severity& severity) {
    severity = parse_severity(json.get<std::string>()).value_or(Severity::error);
}
void to_json(util::SortedJson& json, const ErrorLine& line) {
    json = util::fields_to_json(line);
}
void from_json(const util::SortedJson& json, ErrorLine& line) {
    util::fields_from_json(json, line);
}
void to_json(util::SortedJson& json, const Metric& metric) {
    json = util::fields_to_json(metric);
}
void from_json(const util::SortedJson& json, Metric& metric) {
    util::fields_from_json(json, metric);
}

std::string encode(const Sample& sample) {
    return util::fields_to_json(sample).dump(-1, ' ', false,
                                             util::SortedJson::error_handler_t::replace);
}

Expected<Sample> decode_sample(std::string_view json, const std::string& what) {
    try {
        Sample sample;
        util::fields_from_json(util::SortedJson::parse(json), sample);
        return sample;
    } catch (const util::SortedJson::exception& error) {
        return fail(ErrorKind::infra,
                    what + ": not a whole sample (" + std::string(error.what()) + ")");
    }
}

std::optional<double> metric_value(const Sample& sample, std::string_view name) {
    for (const Metric& metric : sample.metrics)
        if (metric.name == name)
            return metric.value;
    return std::nullopt;
}

namespace {

// A line the guest printed, made safe to show: control bytes and the rest of what is
// not printable ASCII become '?', and it is cut at 160 characters.
std::string shown_line(std::string_view line) {
    constexpr size_t k_most = 160;
    std::string out;
    for (char c : line.substr(0, k_most))
        out += c >= 0x20 && c < 0x7f ? c : '?';
    if (line.size() > k_most)
        out += "...";
    return out;
}

// The evidence's lines that say something: not blank, and not the headings of the log
// tails it holds ("workload output (tail):").
std::vector<std::string_view> telling_lines(std::string_view evidence) {
    std::vector<std::string_view> lines;
    while (!evidence.empty()) {
        size_t end = evidence.find('\n');
        std::string_view line = evidence.substr(0, end);
        if (line.find_first_not_of(" \t\r") != std::string_view::npos && !line.ends_with("(tail):"))
            lines.push_back(line);
        evidence = end == std::string_view::npos ? std::string_view() : evidence.substr(end + 1);
    }
    return lines;
}

bool explained_by_lines(const Sample& sample) {
    return sample.outcome != Outcome::infra_error && sample.error_count > 0;
}

} // namespace

std::string why_not_ok(const Sample& sample) {
    if (sample.outcome == Outcome::ok || sample.outcome == Outcome::aborted ||
        explained_by_lines(sample))
        return "";
    const auto lines = telling_lines(sample.evidence);
    if (lines.empty())
        return "";
    if (sample.outcome == Outcome::infra_error)
        return shown_line(lines.front());
    return "last output: " + shown_line(lines.back());
}

std::vector<std::string> last_output(const Sample& sample, size_t most) {
    const auto lines = telling_lines(sample.evidence);
    std::vector<std::string> out;
    for (size_t i = lines.size() > most ? lines.size() - most : 0; i < lines.size(); ++i)
        out.push_back(shown_line(lines[i]));
    return out;
}

std::string outcome_text(const Sample& sample) {
    const std::string why = why_not_ok(sample);
    return std::string(to_string(sample.outcome)) + (why.empty() ? "" : " (" + why + ")");
}

} // namespace rig::core
