// SPDX-License-Identifier: MIT
// The watch's screen of one cell under one criterion.
#include "watch/detect.hpp"

#include "core/significance.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace rig::watch {

namespace {

// As the bisect holds its endpoints.
constexpr double k_alpha = 0.05;

bool lost(const core::Sample& sample) {
    return sample.outcome == core::Outcome::infra_error || sample.outcome == core::Outcome::aborted;
}

// Boot failures and hangs (the bisect's), and a kernel that does not build: worse than any
// error a workload prints.
bool worse(const core::Sample& sample) {
    return bisect::broken(sample) || sample.outcome == core::Outcome::build_failed;
}

std::optional<std::string> screen_errors(const std::vector<core::Sample>& baseline,
                                         const std::vector<core::Sample>& head) {
    std::set<std::string> known;
    bool baseline_broken = false;
    for (const core::Sample& sample : baseline) {
        if (lost(sample))
            continue;
        baseline_broken = baseline_broken || worse(sample);
        for (const std::string& family : bisect::failure_families(sample))
            known.insert(family);
    }
    for (const core::Sample& sample : head) {
        if (lost(sample))
            continue;
        if (worse(sample) && !baseline_broken)
            return std::string(k_worse_outcome) + std::string(core::to_string(sample.outcome)) +
                   " where the baseline ran";
        for (const std::string& family : bisect::failure_families(sample))
            if (!known.count(family))
                return "a new error: " + family;
    }
    return std::nullopt;
}

bool varies(const std::vector<double>& values) {
    return std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) != values.end();
}

std::string percent(double fraction) {
    return (fraction >= 0 ? "+" : "") + util::fixed(fraction * 100, 1) + "%";
}

std::optional<std::string> screen_values(const bisect::Criterion& criterion,
                                         const std::vector<core::Sample>& baseline_samples,
                                         const std::vector<core::Sample>& head_samples) {
    std::vector<double> before = values(criterion, baseline_samples);
    std::vector<double> after = values(criterion, head_samples);
    if (before.empty() || after.empty())
        return std::nullopt;
    const double old_median = bisect::spread_of(before).median;
    const double new_median = bisect::spread_of(after).median;
    // The signed change the criterion asks for: duration is slower by its threshold, a
    // metric moves by its change, or by the default either way.
    double wanted = criterion.kind == bisect::CriterionKind::duration
                        ? criterion.threshold
                        : criterion.change.value_or(k_default_metric_change);
    const bool either_way = criterion.kind == bisect::CriterionKind::metric && !criterion.change;
    const double change = old_median != 0
                              ? (new_median - old_median) / std::abs(old_median)
                              : (new_median == 0 ? 0.0 : std::copysign(INFINITY, new_median));
    const bool past = either_way ? std::abs(change) >= wanted
                                 : (wanted >= 0 ? change >= wanted : change <= wanted);
    if (!past)
        return std::nullopt;
    if (before.size() >= 2 && after.size() >= 2 && (varies(before) || varies(after))) {
        // The rank test, as the bisect's endpoints are held.
        auto result =
            core::run_test(bisect::difference_test(before.size(), after.size()), before, after);
        if (result && result->p >= k_alpha)
            return std::nullopt;
    }
    const std::string name =
        criterion.kind == bisect::CriterionKind::metric ? criterion.metric : "duration";
    return name + " " + util::fixed(old_median, 3) + " -> " + util::fixed(new_median, 3) + " (" +
           percent(change) + "), threshold " + (either_way ? "±" : "") + percent(wanted);
}

} // namespace

std::vector<double> values(const bisect::Criterion& criterion,
                           const std::vector<core::Sample>& samples) {
    std::vector<double> out;
    for (const core::Sample& sample : samples) {
        if (!core::measured(sample.outcome))
            continue;
        if (auto value = bisect::measured_value(criterion, sample))
            out.push_back(*value);
    }
    return out;
}

std::string bisect_criterion(const std::string& criterion, const std::string& detail) {
    if (!util::starts_with(detail, k_worse_outcome))
        return criterion;
    std::string_view word = std::string_view(detail).substr(k_worse_outcome.size());
    word = word.substr(0, word.find(' '));
    auto outcome = core::parse_outcome(word);
    std::string_view kind = outcome ? bisect::broken_class(*outcome) : "";
    return kind.empty() ? criterion : "outcome:" + std::string(kind);
}

std::optional<std::string> screen(const bisect::Criterion& criterion,
                                  const std::vector<core::Sample>& baseline,
                                  const std::vector<core::Sample>& head) {
    switch (criterion.kind) {
    case bisect::CriterionKind::errors:
    case bisect::CriterionKind::signature:
    case bisect::CriterionKind::outcome:
        return screen_errors(baseline, head);
    case bisect::CriterionKind::duration:
    case bisect::CriterionKind::metric:
        return screen_values(criterion, baseline, head);
    }
    return std::nullopt;
}

} // namespace rig::watch
