// SPDX-License-Identifier: MIT
// Criteria, sample classes, sample counts and verdicts for rig bisect.
#include "bisect/verdict.hpp"

#include "core/stats.hpp"
#include "report/significance.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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
    }
    return "?";
}

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
    return fail(ErrorKind::usage, "unknown criterion '" + std::string(text) +
                                      "': use errors, signature:REGEX or duration[:+N%]");
}

std::string_view to_string(SampleClass value) {
    switch (value) {
    case SampleClass::reproduces:
        return "reproduces";
    case SampleClass::clean:
        return "clean";
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

const core::ErrorLine* matching_line(const Criterion& criterion, const core::Sample& sample,
                                     const std::set<std::string>& targets) {
    if (criterion.kind == CriterionKind::signature) {
        std::regex pattern(criterion.pattern);
        for (const auto& line : sample.lines)
            if (std::regex_search(line.line, pattern) || std::regex_search(line.signature, pattern))
                return &line;
        return nullptr;
    }
    for (const auto& line : sample.lines)
        if (line.severity == core::Severity::error && targets.count(line.signature))
            return &line;
    return nullptr;
}

// make's summary of any failed recipe: says nothing about which failure it was.
bool generic_failure(const std::string& signature) {
    static const std::regex k_make(R"(^make(\[N\])?: \*\*\*)");
    return std::regex_search(signature, k_make);
}

} // namespace

std::set<std::string> regression_signatures(const std::vector<core::Sample>& bad_samples) {
    std::map<std::string, int> seen; // signature -> failing samples that printed it
    std::set<std::string> from_kernel;
    int failing = 0;
    for (const auto& sample : bad_samples) {
        if (!failed(sample))
            continue;
        ++failing;
        std::set<std::string> mine;
        for (const auto& line : sample.lines) {
            if (line.severity != core::Severity::error)
                continue;
            mine.insert(line.signature);
            if (line.source != "workload")
                from_kernel.insert(line.signature);
        }
        for (const auto& signature : mine)
            ++seen[signature];
    }
    // The kernel's own lines say what broke; a workload's "make: *** Error" lines follow
    // any failure, so they mark the regression only when the kernel said nothing.
    std::set<std::string> kernel, specific, all;
    for (const auto& [signature, count] : seen) {
        if (2 * count < failing)
            continue;
        all.insert(signature);
        if (from_kernel.count(signature))
            kernel.insert(signature);
        else if (!generic_failure(signature))
            specific.insert(signature);
    }
    return !kernel.empty() ? kernel : !specific.empty() ? specific : all;
}

SampleClass classify_sample(const Criterion& criterion, const core::Sample& sample,
                            const std::set<std::string>& targets) {
    if (sample.outcome == core::Outcome::aborted)
        return SampleClass::aborted;
    if (sample.outcome == core::Outcome::infra_error)
        return SampleClass::infra;
    switch (criterion.kind) {
    case CriterionKind::signature:
        if (matching_line(criterion, sample, targets))
            return SampleClass::reproduces;
        return broken(sample) ? SampleClass::unusable : SampleClass::clean;
    case CriterionKind::errors:
        if (broken(sample))
            return SampleClass::unusable;
        if (!failed(sample))
            return SampleClass::clean;
        if (targets.empty() || matching_line(criterion, sample, targets))
            return SampleClass::reproduces;
        return SampleClass::clean; // a stray error of another signature
    case CriterionKind::duration:
        return sample.outcome == core::Outcome::ok && sample.guest_seconds > 0
                   ? SampleClass::clean
                   : SampleClass::unusable;
    }
    return SampleClass::unusable;
}

std::string sample_evidence(const Criterion& criterion, const core::Sample& sample,
                            const std::set<std::string>& targets) {
    std::string outcome(core::to_string(sample.outcome));
    if (criterion.kind == CriterionKind::duration && sample.outcome == core::Outcome::ok) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.2f s", sample.guest_seconds);
        return buffer;
    }
    if (const auto* line = matching_line(criterion, sample, targets))
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
    double rate = static_cast<double>(reproduced) / total;
    plan.rate = std::min(rate, static_cast<double>(total) / (total + 1));
    int n = static_cast<int>(std::ceil(std::log(1 - confidence) / std::log(1 - plan.rate)));
    plan.samples = std::clamp(n, 2, std::max(2, cap));
    plan.confidence = 1 - std::pow(1 - plan.rate, plan.samples);
    return plan;
}

std::string_view to_string(Verdict verdict) {
    switch (verdict) {
    case Verdict::good:
        return "good";
    case Verdict::bad:
        return "bad";
    case Verdict::skip:
        return "skip";
    case Verdict::unsure:
        return "unsure";
    }
    return "?";
}

std::optional<Verdict> parse_verdict(std::string_view text) {
    for (Verdict verdict : {Verdict::good, Verdict::bad, Verdict::skip, Verdict::unsure})
        if (to_string(verdict) == text)
            return verdict;
    return std::nullopt;
}

Decision decide_functional(const std::vector<SampleClass>& samples, int needed) {
    int clean = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (samples[i] == SampleClass::reproduces)
            return {Verdict::bad, "sample " + std::to_string(i + 1) + " reproduces"};
        if (samples[i] == SampleClass::unusable)
            return {Verdict::skip, "sample " + std::to_string(i + 1) +
                                       " failed in a way the criterion does not ask about"};
        clean += samples[i] == SampleClass::clean;
    }
    if (clean >= needed)
        return {Verdict::good, std::to_string(clean) + " clean samples"};
    return {std::nullopt, std::to_string(clean) + " of " + std::to_string(needed) + " clean"};
}

namespace {

double median(const std::vector<double>& values) {
    return core::summarize(values).median;
}

// Two-sided p of a difference; 1 when the test is undefined (no spread on either side),
// unless the values do not overlap at all, which no noise explains.
double difference_p(const std::vector<double>& a, const std::vector<double>& b) {
    auto result =
        a.size() >= 8 && b.size() >= 8 ? report::mann_whitney_u(a, b) : report::welch_t_test(a, b);
    if (result)
        return result->p;
    auto [a_min, a_max] = std::minmax_element(a.begin(), a.end());
    auto [b_min, b_max] = std::minmax_element(b.begin(), b.end());
    return (*a_max < *b_min || *b_max < *a_min) ? 0 : 1;
}

std::string seconds(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2f s", value);
    return buffer;
}

std::string p_text(double p) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3g", p);
    return buffer;
}

} // namespace

Decision decide_duration(const Calibration& calibration, const std::vector<double>& timings,
                         int unusable, int initial, int budget, double alpha) {
    if (unusable > 0)
        return {Verdict::skip, std::to_string(unusable) + " sample(s) failed or hung"};
    if (static_cast<int>(timings.size()) < std::max(2, initial))
        return {std::nullopt, std::to_string(timings.size()) + " timings so far"};
    double m = median(timings);
    double p_good = difference_p(timings, calibration.good);
    double p_bad = difference_p(timings, calibration.bad);
    double good_median = median(calibration.good);
    double bad_median = median(calibration.bad);
    // Where the commit sits between the endpoints (0 = good, 1 = bad). A verdict needs
    // both: the commit within the third next to one endpoint, and the tests agreeing,
    // i.e. it differs from the far endpoint or not from the near one. The position keeps
    // a drifting host (tight timings differing from both) from blocking a verdict; the
    // third keeps a wide, noisy endpoint (differing from neither) from lending one to a
    // commit half-way between, which would name a wrong culprit.
    double position = bad_median > good_median ? (m - good_median) / (bad_median - good_median) : 0;
    bool slower_than_good = p_good < alpha && m > good_median;
    bool faster_than_bad = p_bad < alpha && m < bad_median;
    std::string why = "median " + seconds(m) + " of " + std::to_string(timings.size()) + ", " +
                      std::to_string(static_cast<int>(std::lround(position * 100))) +
                      "% of the way to bad; vs good p=" + p_text(p_good) +
                      ", vs bad p=" + p_text(p_bad);
    // Thirds: under TCG and load a harmless commit was seen 24% of the way to bad.
    if (position >= 2.0 / 3 && (slower_than_good || !faster_than_bad))
        return {Verdict::bad, why};
    if (position <= 1.0 / 3 && (faster_than_bad || !slower_than_good))
        return {Verdict::good, why};
    if (static_cast<int>(timings.size()) < budget)
        return {std::nullopt, why};
    return {Verdict::unsure, why + ": neither endpoint within the sample budget"};
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
                          std::to_string(calibration.good.size()) + ", p=" + p_text(p) + ")";
    // Two endpoints alone cannot tell a fast BAD from a slow GOOD: the message names both.
    if (bad < good * (1 + threshold))
        return "not reproducible at BAD, or already bad at GOOD: " + numbers + " is not " +
               std::to_string(static_cast<int>(std::lround(threshold * 100))) + "% slower";
    if (p >= alpha)
        return "not reproducible at BAD: " + numbers + " is not significant at alpha " +
               p_text(alpha);
    return std::nullopt;
}

} // namespace rig::bisect
