// SPDX-License-Identifier: MIT
// Duration and metric criteria: the endpoints' calibration and a commit's verdict from
// its values, against both endpoints.
#include "bisect/verdict.hpp"
#include "core/significance.hpp"
#include "core/stats.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rig::bisect {

core::Test difference_test(size_t a, size_t b) {
    return a >= 8 && b >= 8 ? core::Test::mann_whitney : core::Test::welch;
}

namespace {

double median(const std::vector<double>& values) {
    return core::summarize(values).median;
}

// Two-sided p of a difference; 1 when the test is undefined (no spread on either side),
// unless the values do not overlap at all, which no noise explains.
double difference_p(const std::vector<double>& a, const std::vector<double>& b) {
    auto result = core::run_test(difference_test(a.size(), b.size()), a, b);
    if (result)
        return result->p;
    auto [a_min, a_max] = std::minmax_element(a.begin(), a.end());
    auto [b_min, b_max] = std::minmax_element(b.begin(), b.end());
    return (*a_max < *b_min || *b_max < *a_min) ? 0 : 1;
}

std::string seconds(double value) {
    return util::fixed(value, 2) + " s";
}

// How a compared value prints: duration's timings, or a metric's values.
struct Units {
    const char* noun; // plural
    std::string (*format)(double);
};
constexpr Units k_timings{"timings", seconds};
constexpr Units k_values{"values", util::compact};

// decide_duration's rule for either direction: GOOD below BAD (a slowdown, a count that
// grew) or above it (a count that fell).
Decision decide_between(const Calibration& calibration, const std::vector<double>& values,
                        int unusable, int initial, int budget, double alpha, Units units) {
    if (unusable > 0)
        return {core::Verdict::skip, std::to_string(unusable) + " sample(s) failed or hung"};
    if (static_cast<int>(values.size()) < std::max(2, initial))
        return {std::nullopt, std::to_string(values.size()) + " " + units.noun + " so far"};
    double m = median(values);
    double p_good = difference_p(values, calibration.good);
    double p_bad = difference_p(values, calibration.bad);
    double good_median = median(calibration.good);
    double bad_median = median(calibration.bad);
    double sign = bad_median < good_median ? -1 : 1;
    // Where the commit sits between the endpoints (0 = good, 1 = bad). A verdict needs
    // both: the commit within the third next to one endpoint, and the tests agreeing,
    // i.e. it differs from the far endpoint or not from the near one. The position keeps
    // a drifting host (tight timings differing from both) from blocking a verdict; the
    // third keeps a wide, noisy endpoint (differing from neither) from lending one to a
    // commit half-way between, which would name a wrong culprit.
    double position =
        bad_median != good_median ? (m - good_median) / (bad_median - good_median) : 0;
    bool beyond_good = p_good < alpha && (m - good_median) * sign > 0;
    bool short_of_bad = p_bad < alpha && (bad_median - m) * sign > 0;
    std::string why = "median " + units.format(m) + " of " + std::to_string(values.size()) + ", " +
                      std::to_string(static_cast<int>(std::lround(position * 100))) +
                      "% of the way to bad; vs good p=" +
                      util::format_p(p_good, util::PStyle::three_significant) +
                      ", vs bad p=" + util::format_p(p_bad, util::PStyle::three_significant);
    // Thirds: under TCG and load a harmless commit was seen 24% of the way to bad.
    if (position >= 2.0 / 3 && (beyond_good || !short_of_bad))
        return {core::Verdict::bad, why};
    if (position <= 1.0 / 3 && (short_of_bad || !beyond_good))
        return {core::Verdict::good, why};
    if (static_cast<int>(values.size()) < budget)
        return {std::nullopt, why};
    return {core::Verdict::unsure, why + ": neither endpoint within the sample budget"};
}

} // namespace

Decision decide_duration(const Calibration& calibration, const std::vector<double>& timings,
                         int unusable, int initial, int budget, double alpha) {
    return decide_between(calibration, timings, unusable, initial, budget, alpha, k_timings);
}

std::optional<std::string> check_duration_endpoints(const Calibration& calibration,
                                                    double threshold, double alpha) {
    if (calibration.good.size() < 2 || calibration.bad.size() < 2)
        return "not reproducible at BAD: fewer than two usable timings at an endpoint";
    double good = median(calibration.good);
    double bad = median(calibration.bad);
    double p = difference_p(calibration.bad, calibration.good);
    std::string numbers = "median " + seconds(bad) + " at BAD vs " + seconds(good) +
                          " at GOOD (n=" + std::to_string(calibration.bad.size()) + "/" +
                          std::to_string(calibration.good.size()) +
                          ", p=" + util::format_p(p, util::PStyle::three_significant) + ")";
    // Two endpoints alone cannot tell a fast BAD from a slow GOOD: the message names both.
    if (bad < good * (1 + threshold))
        return "not reproducible at BAD, or already bad at GOOD: " + numbers + " is not " +
               std::to_string(static_cast<int>(std::lround(threshold * 100))) + "% slower";
    if (p >= alpha)
        return "not reproducible at BAD: " + numbers + " is not significant at alpha " +
               util::format_p(alpha, util::PStyle::three_significant);
    return std::nullopt;
}

Spread spread_of(const std::vector<double>& values) {
    core::Summary summary = core::summarize(values);
    Spread spread{summary.n, summary.median, summary.min, summary.max, 0};
    if (summary.mean != 0)
        spread.cv = summary.stddev / std::abs(summary.mean);
    return spread;
}

namespace {

std::string percent(double fraction) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3g%%", fraction * 100);
    return buffer;
}

double half_range(const Spread& spread) {
    return (spread.max - spread.min) / 2;
}

} // namespace

std::string to_text(const Spread& spread) {
    if (spread.n == 0)
        return "none usable";
    return "median " + util::compact(spread.median) + " (" + util::compact(spread.min) + "-" +
           util::compact(spread.max) + ", CV " + percent(spread.cv) +
           ", n=" + std::to_string(spread.n) + ")";
}

MetricPlan plan_metric(const Criterion& criterion, Calibration calibration, double alpha) {
    MetricPlan plan;
    plan.good = spread_of(calibration.good);
    plan.bad = spread_of(calibration.bad);
    plan.calibration = std::move(calibration);
    plan.midpoint = (plan.good.median + plan.bad.median) / 2;
    const std::string& name = criterion.metric;
    if (plan.good.n < 2 || plan.bad.n < 2) {
        plan.problem = "not reproducible at BAD: fewer than two samples with " + name +
                       " at an endpoint (" + std::to_string(plan.bad.n) + " at BAD, " +
                       std::to_string(plan.good.n) + " at GOOD)";
        return plan;
    }
    double gap = plan.bad.median - plan.good.median;
    double p = difference_p(plan.calibration.bad, plan.calibration.good);
    std::string numbers = name + " median " + util::compact(plan.bad.median) + " at BAD vs " +
                          util::compact(plan.good.median) +
                          " at GOOD (n=" + std::to_string(plan.bad.n) + "/" +
                          std::to_string(plan.good.n) +
                          ", p=" + util::format_p(p, util::PStyle::three_significant) + ")";
    // Two endpoints alone cannot tell a good BAD from a bad GOOD: the message names both.
    const std::string either = "not reproducible at BAD, or already bad at GOOD: ";
    if (gap == 0) {
        plan.problem = either + numbers + " does not differ";
        return plan;
    }
    if (criterion.change) {
        double change = *criterion.change;
        double wanted = plan.good.median * (1 + change);
        bool enough = change > 0 ? gap > 0 && plan.bad.median >= wanted
                                 : gap < 0 && plan.bad.median <= wanted;
        if (!enough) {
            plan.problem = either + numbers + " is not " + percent(std::abs(change)) +
                           (change > 0 ? " higher" : " lower");
            return plan;
        }
    }
    bool separated = gap > 0 ? plan.bad.min > plan.good.max : plan.bad.max < plan.good.min;
    if (!separated && p >= alpha) {
        plan.problem = "not reproducible at BAD: " + numbers +
                       " overlaps and is not significant at alpha " +
                       util::format_p(alpha, util::PStyle::three_significant);
        return plan;
    }
    double spread = std::max(half_range(plan.good), half_range(plan.bad));
    plan.rule = separated && std::abs(gap) >= k_tiny_spread_factor * spread
                    ? MetricRule::midpoint
                    : MetricRule::statistical;
    return plan;
}

std::string describe_plan(const Criterion& criterion, const MetricPlan& plan) {
    std::string out =
        criterion.metric + ": GOOD " + to_text(plan.good) + ", BAD " + to_text(plan.bad);
    if (plan.problem)
        return out;
    double gap = std::abs(plan.bad.median - plan.good.median);
    double spread = std::max(half_range(plan.good), half_range(plan.bad));
    std::string factor = util::compact(k_tiny_spread_factor);
    if (plan.rule == MetricRule::midpoint)
        return out + "; the gap " + util::compact(gap) + " is at least " + factor +
               "x the larger half-range " + util::compact(spread) +
               ", so one sample per commit decides, by its side of the midpoint " +
               util::compact(plan.midpoint);
    bool separated = plan.bad.median > plan.good.median ? plan.bad.min > plan.good.max
                                                        : plan.bad.max < plan.good.min;
    return out +
           (separated ? "; the gap " + util::compact(gap) + " is under " + factor +
                            "x the larger half-range " + util::compact(spread)
                      : std::string("; the endpoints' ranges overlap")) +
           ", so each commit is tested against both endpoints (Welch's t-test, Mann-Whitney "
           "from 8 samples a side), as under duration";
}

Decision decide_metric(const MetricPlan& plan, const std::vector<double>& values, int unusable,
                       int initial, int budget, double alpha) {
    if (plan.rule == MetricRule::statistical)
        return decide_between(plan.calibration, values, unusable, initial, budget, alpha, k_values);
    if (unusable > 0)
        return {core::Verdict::skip, std::to_string(unusable) +
                                         " sample(s) failed, hung or lack the "
                                         "metric"};
    if (static_cast<int>(values.size()) < std::max(1, initial))
        return {std::nullopt, std::to_string(values.size()) + " values so far"};
    double sign = plan.bad.median < plan.good.median ? -1 : 1;
    size_t toward_bad = 0, toward_good = 0;
    std::vector<std::string> shown;
    for (double value : values) {
        toward_bad += (value - plan.midpoint) * sign > 0;
        toward_good += (value - plan.midpoint) * sign < 0;
        shown.push_back(util::compact(value));
    }
    double position = (median(values) - plan.good.median) / (plan.bad.median - plan.good.median);
    std::string why = (values.size() == 1 ? "value " : "values ") + util::join(shown, ", ") + ", " +
                      std::to_string(static_cast<int>(std::lround(position * 100))) +
                      "% of the way to bad; midpoint " + util::compact(plan.midpoint);
    if (toward_bad == values.size())
        return {core::Verdict::bad, why};
    if (toward_good == values.size())
        return {core::Verdict::good, why};
    if (static_cast<int>(values.size()) < budget)
        return {std::nullopt, why};
    return {core::Verdict::unsure, why + ": not all on one side within the sample budget"};
}

} // namespace rig::bisect
