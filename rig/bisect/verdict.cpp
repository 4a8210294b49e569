// SPDX-License-Identifier: MIT
// Criteria, sample classes, sample counts and verdicts for rig bisect.
#include "bisect/verdict.hpp"

#include "core/evidence.hpp"
#include "core/significance.hpp"
#include "core/stats.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>

namespace rig::bisect {

std::string Criterion::text() const {
    switch (kind) {
    case CriterionKind::errors:
        return "errors";
    case CriterionKind::signature:
        return "signature:" + pattern;
    case CriterionKind::duration: {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "duration:+%g%%", threshold * 100);
        return buffer;
    }
    case CriterionKind::metric: {
        if (!change)
            return "metric:" + metric;
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, ":%+g%%", *change * 100);
        return "metric:" + metric + buffer;
    }
    }
    return "?";
}

namespace {

// "+N%" or "-N%" as a signed fraction; nullopt when the text is not one.
std::optional<double> parse_change(const std::string& text) {
    if (text.size() < 3 || (text.front() != '+' && text.front() != '-') || text.back() != '%')
        return std::nullopt;
    std::string digits = text.substr(1, text.size() - 2);
    char* end = nullptr;
    double percent = std::strtod(digits.c_str(), &end);
    if (digits.empty() || !std::isdigit(static_cast<unsigned char>(digits.front())) ||
        *end != '\0' || !(percent > 0) || percent > 1000)
        return std::nullopt;
    // Nothing a count can do is more than 100% lower.
    if (text.front() == '-' && percent >= 100)
        return std::nullopt;
    return (text.front() == '-' ? -percent : percent) / 100;
}

Expected<Criterion> parse_metric(std::string_view text) {
    Criterion criterion;
    criterion.kind = CriterionKind::metric;
    std::string rest(text.substr(7));
    std::string change;
    if (auto colon = rest.rfind(':'); colon != std::string::npos) {
        change = rest.substr(colon + 1);
        rest.erase(colon);
    }
    criterion.metric = rest;
    bool spaced = std::any_of(rest.begin(), rest.end(),
                              [](unsigned char c) { return std::isspace(c) || c == ':'; });
    if (rest.empty() || spaced)
        return fail(ErrorKind::usage,
                    "criterion " + std::string(text) +
                        ": expected metric:NAME[:+N%|:-N%] with a metric name such as "
                        "9p.work.getattr or noop/9p.work.getattr");
    if (change.empty() && text.back() != ':')
        return criterion;
    criterion.change = parse_change(change);
    if (!criterion.change)
        return fail(ErrorKind::usage, "criterion " + std::string(text) +
                                          ": the change must be a signed percentage, +N% "
                                          "(bad is higher) or -N% (bad is lower, under 100%)");
    return criterion;
}

} // namespace

Expected<Criterion> parse_criterion(std::string_view text) {
    Criterion criterion;
    if (text == "errors")
        return criterion;
    if (text.rfind("signature:", 0) == 0) {
        criterion.kind = CriterionKind::signature;
        criterion.pattern = std::string(text.substr(10));
        if (criterion.pattern.empty())
            return fail(ErrorKind::usage, "criterion signature: needs a regular expression");
        try {
            std::regex check(criterion.pattern);
        } catch (const std::regex_error& error) {
            return fail(ErrorKind::usage, "criterion " + std::string(text) +
                                              ": not a regular expression: " + error.what());
        }
        return criterion;
    }
    if (text == "duration" || text.rfind("duration:", 0) == 0) {
        criterion.kind = CriterionKind::duration;
        if (text == "duration")
            return criterion;
        std::string value(text.substr(9));
        if (!value.empty() && value.front() == '+')
            value.erase(0, 1);
        if (value.empty() || value.back() != '%')
            return fail(ErrorKind::usage, "criterion " + std::string(text) +
                                              ": expected duration:+N% (for example +10%)");
        value.pop_back();
        char* end = nullptr;
        double percent = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !(percent > 0) || percent > 1000)
            return fail(ErrorKind::usage, "criterion " + std::string(text) +
                                              ": the threshold must be a percentage above 0");
        criterion.threshold = percent / 100;
        return criterion;
    }
    if (text.rfind("metric:", 0) == 0)
        return parse_metric(text);
    return fail(ErrorKind::usage,
                "unknown criterion '" + std::string(text) +
                    "': use errors, signature:REGEX, duration[:+N%] or metric:NAME[:+N%|:-N%]");
}

std::string_view to_string(SampleClass value) {
    switch (value) {
    case SampleClass::reproduces:
        return "reproduces";
    case SampleClass::clean:
        return "clean";
    case SampleClass::stray:
        return "stray";
    case SampleClass::unsure:
        return "unsure";
    case SampleClass::unusable:
        return "unusable";
    case SampleClass::infra:
        return "infra";
    case SampleClass::aborted:
        return "aborted";
    }
    return "?";
}

namespace {

// A metric's value as evidence and reasons print it: counts in full, without a ".000".
std::string number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", value);
    return buffer;
}

bool failed(const core::Sample& sample) {
    return sample.outcome == core::Outcome::errors ||
           sample.outcome == core::Outcome::workload_failed;
}

// Boot failures and hangs: no criterion of rig's asks about them, except a signature
// criterion whose pattern matches what the guest printed.
bool broken(const core::Sample& sample) {
    switch (sample.outcome) {
    case core::Outcome::kernel_panic:
    case core::Outcome::boot_timeout:
    case core::Outcome::workload_timeout:
    case core::Outcome::console_silence:
        return true;
    default:
        return false;
    }
}

// The first line of a signature criterion's match, or of a target family of the model.
const core::ErrorLine* matching_line(const Criterion& criterion, const core::Sample& sample,
                                     const ErrorModel& model) {
    if (criterion.kind == CriterionKind::signature) {
        std::regex pattern(criterion.pattern);
        for (const auto& line : sample.lines)
            if (std::regex_search(line.line, pattern) || std::regex_search(line.signature, pattern))
                return &line;
        return nullptr;
    }
    for (const auto& line : sample.lines)
        if (line.severity == core::Severity::error &&
            model.targets.count(core::family_of(line.line)))
            return &line;
    return nullptr;
}

// make's summary of any failed recipe, and gcc's "compilation terminated.": they say
// nothing about which failure it was.
bool generic_failure(const std::string& family) {
    static const std::regex k_make(R"(^make(\[N\])?: \*\*\*)");
    return std::regex_search(family, k_make) || family == "compilation terminated.";
}

// Families a sample shows, for counting: none unless it failed.
struct Counts {
    std::map<std::string, int> by_family;
    std::map<std::string, std::string> example;
    int usable = 0;
    int failing = 0;
};

Counts count_families(const std::vector<core::Sample>& samples) {
    Counts out;
    for (const auto& sample : samples) {
        if (sample.outcome == core::Outcome::aborted ||
            sample.outcome == core::Outcome::infra_error || broken(sample))
            continue;
        ++out.usable;
        auto families = failure_families(sample);
        out.failing += !families.empty();
        for (const auto& family : families)
            ++out.by_family[family];
        for (const auto& line : sample.lines)
            if (line.severity == core::Severity::error)
                out.example.emplace(core::family_of(line.line), line.line);
    }
    return out;
}

// "3 of 3" or "0 of 5".
std::string of(int count, int total) {
    return std::to_string(count) + " of " + std::to_string(total);
}

} // namespace

std::set<std::string> failure_families(const core::Sample& sample) {
    std::set<std::string> out, generic;
    if (!failed(sample))
        return out;
    for (const auto& line : sample.lines) {
        if (line.severity != core::Severity::error)
            continue;
        std::string family = core::family_of(line.line);
        (generic_failure(family) ? generic : out).insert(std::move(family));
    }
    if (out.empty())
        out.insert(std::string(k_silent_family));
    return out;
}

ErrorModel error_model(const std::vector<core::Sample>& bad, const std::vector<core::Sample>& good,
                       double alpha) {
    ErrorModel model;
    Counts at_bad = count_families(bad);
    Counts at_good = count_families(good);
    model.bad_samples = at_bad.usable;
    model.good_samples = at_good.usable;
    for (const auto& [family, count] : at_bad.by_family)
        model.families[family].bad = count;
    for (const auto& [family, count] : at_good.by_family)
        model.families[family].good = count;
    for (auto& [family, entry] : model.families) {
        const auto& seen = at_bad.example.count(family) ? at_bad.example : at_good.example;
        auto found = seen.find(family);
        entry.example = found != seen.end() ? found->second : family;
    }
    // GOOD's families are strays unless BAD shows them more often beyond chance.
    for (const auto& [family, entry] : model.families)
        if (entry.good > 0 && core::fisher_greater(entry.bad, model.bad_samples, entry.good,
                                                   model.good_samples) >= alpha)
            model.baseline.insert(family);
    // The regression: BAD's other families that stood in two or more of its samples and
    // in at least half of the failing ones, or that it showed significantly more often
    // than GOOD. One sample is no more than a flake shows. A flake GOOD happened not to
    // show may still slip in: the verification, the culprit against the commits before
    // it, rarely passes it.
    for (const auto& [family, entry] : model.families)
        if (entry.bad > 0 && !model.baseline.count(family) &&
            ((entry.bad >= 2 && 2 * entry.bad >= at_bad.failing) ||
             core::fisher_greater(entry.bad, model.bad_samples, entry.good, model.good_samples) <
                 alpha))
            model.targets.insert(family);
    for (const auto& sample : bad) {
        if (sample.outcome == core::Outcome::aborted ||
            sample.outcome == core::Outcome::infra_error || broken(sample))
            continue;
        auto families = failure_families(sample);
        model.reproduced += std::any_of(families.begin(), families.end(), [&](const auto& family) {
            return model.targets.count(family) > 0;
        });
    }
    if (at_bad.failing == 0) {
        model.problem = "not reproducible at BAD: none of " + std::to_string(model.bad_samples) +
                        " usable samples failed";
    } else if (model.targets.empty()) {
        std::vector<std::string> shown;
        for (const auto& [family, entry] : model.families)
            if (entry.bad > 0)
                shown.push_back(entry.example + " (" + of(entry.bad, model.bad_samples) +
                                " at BAD, " + of(entry.good, model.good_samples) + " at GOOD)");
        model.problem = "already bad at GOOD, or not reproducible at BAD: BAD fails no more "
                        "often than GOOD does: " +
                        util::join(shown, "; ");
    }
    return model;
}

namespace {

std::string describe(const ErrorModel& model, const std::set<std::string>& families,
                     const std::string& heading) {
    std::vector<std::string> parts;
    for (const auto& family : families) {
        const Family& entry = model.families.at(family);
        parts.push_back(entry.example + " (" + of(entry.bad, model.bad_samples) + " at BAD, " +
                        of(entry.good, model.good_samples) + " at GOOD)");
    }
    return parts.empty() ? "" : heading + util::join(parts, " | ");
}

} // namespace

std::string describe_regression(const ErrorModel& model) {
    return describe(model, model.targets, "regression: ");
}

std::string describe_strays(const ErrorModel& model) {
    return describe(model, model.baseline, "stray, GOOD fails so too: ");
}

bool bad_needs_more(const std::vector<core::Sample>& bad) {
    Counts counts = count_families(bad);
    int most = 0;
    for (const auto& [family, count] : counts.by_family)
        most = std::max(most, count);
    return counts.failing > 0 && most < 2;
}

SampleClass classify_sample(const Criterion& criterion, const core::Sample& sample,
                            const ErrorModel& model) {
    if (sample.outcome == core::Outcome::aborted)
        return SampleClass::aborted;
    if (sample.outcome == core::Outcome::infra_error)
        return SampleClass::infra;
    switch (criterion.kind) {
    case CriterionKind::signature:
        if (matching_line(criterion, sample, model))
            return SampleClass::reproduces;
        return broken(sample) ? SampleClass::unusable : SampleClass::clean;
    case CriterionKind::errors: {
        if (broken(sample))
            return SampleClass::unusable;
        auto families = failure_families(sample);
        if (families.empty())
            return SampleClass::clean;
        if (model.bad_samples == 0)
            return SampleClass::reproduces;
        bool all_stray = true;
        for (const auto& family : families) {
            if (model.targets.count(family))
                return SampleClass::reproduces;
            all_stray &= model.baseline.count(family) > 0;
        }
        // A failure is never clean: either GOOD fails so too, or nobody knows yet.
        return all_stray ? SampleClass::stray : SampleClass::unsure;
    }
    case CriterionKind::duration:
    case CriterionKind::metric:
        return sample.outcome == core::Outcome::ok && measured_value(criterion, sample)
                   ? SampleClass::clean
                   : SampleClass::unusable;
    }
    return SampleClass::unusable;
}

std::optional<double> measured_value(const Criterion& criterion, const core::Sample& sample) {
    switch (criterion.kind) {
    case CriterionKind::duration:
        if (sample.guest_seconds > 0)
            return sample.guest_seconds;
        return std::nullopt;
    case CriterionKind::metric:
        return core::metric_value(sample, criterion.metric);
    default:
        return std::nullopt;
    }
}

std::string sample_evidence(const Criterion& criterion, const core::Sample& sample,
                            const ErrorModel& model) {
    std::string outcome(core::to_string(sample.outcome));
    if (criterion.kind == CriterionKind::duration && sample.outcome == core::Outcome::ok) {
        return util::fixed(sample.guest_seconds, 2) + " s";
    }
    if (criterion.kind == CriterionKind::metric && sample.outcome == core::Outcome::ok) {
        auto value = measured_value(criterion, sample);
        return value ? criterion.metric + " " + number(*value)
                     : "ok, but the sample has no metric " + criterion.metric;
    }
    if (const auto* line = matching_line(criterion, sample, model))
        return outcome + ": " + line->line;
    if (!sample.lines.empty() && failed(sample))
        return outcome + ": " + sample.lines.front().line;
    if (sample.outcome != core::Outcome::ok) {
        // The evidence is log tails under headers ("qemu.log (tail):"): its first real line.
        for (const std::string& line : util::split(sample.evidence, '\n')) {
            std::string_view text = util::trim(line);
            if (!text.empty() && text.back() != ':')
                return outcome + ": " + std::string(text.substr(0, 160));
        }
    }
    return outcome;
}

SamplePlan plan_samples(int reproduced, int total, double confidence, int cap) {
    SamplePlan plan;
    if (total <= 0 || reproduced <= 0)
        return plan;
    plan.rate = core::rate_lower_bound(reproduced, total, k_rate_level);
    int n = static_cast<int>(std::ceil(std::log(1 - confidence) / std::log(1 - plan.rate)));
    plan.samples = std::clamp(n, 2, std::max(2, cap));
    plan.confidence = 1 - std::pow(1 - plan.rate, plan.samples);
    return plan;
}

SamplePlan plan_verification(int reproduced, int total, double confidence, int cap) {
    return plan_samples(reproduced, total, 1 - (1 - confidence) * (1 - confidence), 2 * cap);
}

core::Test difference_test(size_t a, size_t b) {
    return a >= 8 && b >= 8 ? core::Test::mann_whitney : core::Test::welch;
}

Decision decide_functional(const std::vector<SampleClass>& samples, int needed, int budget) {
    int clean = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (samples[i] == SampleClass::reproduces)
            return {core::Verdict::bad, "sample " + std::to_string(i + 1) + " reproduces"};
        if (samples[i] == SampleClass::unusable)
            return {core::Verdict::skip, "sample " + std::to_string(i + 1) +
                                             " failed in a way the criterion does not ask about"};
        clean += samples[i] == SampleClass::clean;
    }
    std::string counts = of(clean, needed) + " clean";
    int other = static_cast<int>(samples.size()) - clean;
    if (other > 0)
        counts += ", " + std::to_string(other) + " failed as neither endpoint tells apart";
    if (clean >= needed)
        return {core::Verdict::good, counts};
    if (static_cast<int>(samples.size()) >= budget)
        return {core::Verdict::unsure, counts + " within " + std::to_string(budget) + " samples"};
    return {std::nullopt, counts};
}

Decision decide_against_parent(const std::vector<SampleClass>& samples, int parent_reproduced,
                               int parent_samples, int budget) {
    int reproduced = 0, usable = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (samples[i] == SampleClass::unusable)
            return {core::Verdict::skip, "sample " + std::to_string(i + 1) +
                                             " failed in a way the criterion does not ask about"};
        reproduced += samples[i] == SampleClass::reproduces;
        usable += samples[i] == SampleClass::reproduces || samples[i] == SampleClass::clean;
    }
    double p = core::fisher_greater(reproduced, usable, parent_reproduced, parent_samples);
    std::string why = "reproduces in " + of(reproduced, usable) + " against " +
                      of(parent_reproduced, parent_samples) +
                      " before it (parent and GOOD), Fisher p=" +
                      util::format_p(p, util::PStyle::three_significant);
    if (p < k_verify_alpha)
        return {core::Verdict::bad, why};
    if (static_cast<int>(samples.size()) < budget)
        return {std::nullopt, why};
    if (reproduced == 0 && usable == static_cast<int>(samples.size()))
        return {core::Verdict::good, why};
    return {core::Verdict::unsure,
            why + ": not significant at " +
                util::format_p(k_verify_alpha, util::PStyle::three_significant) + " within " +
                std::to_string(budget) + " samples"};
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
constexpr Units k_values{"values", number};

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
    return "median " + number(spread.median) + " (" + number(spread.min) + "-" +
           number(spread.max) + ", CV " + percent(spread.cv) + ", n=" + std::to_string(spread.n) +
           ")";
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
    std::string numbers = name + " median " + number(plan.bad.median) + " at BAD vs " +
                          number(plan.good.median) + " at GOOD (n=" + std::to_string(plan.bad.n) +
                          "/" + std::to_string(plan.good.n) +
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
    std::string factor = number(k_tiny_spread_factor);
    if (plan.rule == MetricRule::midpoint)
        return out + "; the gap " + number(gap) + " is at least " + factor +
               "x the larger half-range " + number(spread) +
               ", so one sample per commit decides, by its side of the midpoint " +
               number(plan.midpoint);
    bool separated = plan.bad.median > plan.good.median ? plan.bad.min > plan.good.max
                                                        : plan.bad.max < plan.good.min;
    return out +
           (separated ? "; the gap " + number(gap) + " is under " + factor +
                            "x the larger half-range " + number(spread)
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
        shown.push_back(number(value));
    }
    double position = (median(values) - plan.good.median) / (plan.bad.median - plan.good.median);
    std::string why = (values.size() == 1 ? "value " : "values ") + util::join(shown, ", ") + ", " +
                      std::to_string(static_cast<int>(std::lround(position * 100))) +
                      "% of the way to bad; midpoint " + number(plan.midpoint);
    if (toward_bad == values.size())
        return {core::Verdict::bad, why};
    if (toward_good == values.size())
        return {core::Verdict::good, why};
    if (static_cast<int>(values.size()) < budget)
        return {std::nullopt, why};
    return {core::Verdict::unsure, why + ": not all on one side within the sample budget"};
}

} // namespace rig::bisect
