// SPDX-License-Identifier: MIT
// Criteria, sample classes, what a failure means (families held against GOOD), sample
// counts and the functional verdicts for rig bisect; durations and metrics are values.cpp.
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
    case CriterionKind::outcome:
        return "outcome:" + pattern;
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
    // `output` is the outcome wrong-output: what the workload produced is not what it
    // should be (run/outputs.hpp).
    if (text == "output") {
        criterion.kind = CriterionKind::outcome;
        criterion.pattern = "wrong-output";
        return criterion;
    }
    if (text.rfind("outcome:", 0) == 0) {
        criterion.kind = CriterionKind::outcome;
        criterion.pattern = std::string(text.substr(8));
        if (criterion.pattern != "panic" && criterion.pattern != "hang" &&
            criterion.pattern != "wrong-output")
            return fail(ErrorKind::usage,
                        "criterion " + std::string(text) +
                            ": expected outcome:panic, outcome:hang or outcome:wrong-output");
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
                    "': use errors, signature:REGEX, duration[:+N%], metric:NAME[:+N%|:-N%], "
                    "output or outcome:panic|hang");
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

bool failed(const core::Sample& sample) {
    return sample.outcome == core::Outcome::errors ||
           sample.outcome == core::Outcome::workload_failed ||
           sample.outcome == core::Outcome::disk_quota;
}

} // namespace

bool broken(const core::Sample& sample) {
    return !broken_class(sample.outcome).empty();
}

std::string_view broken_class(core::Outcome outcome) {
    switch (outcome) {
    case core::Outcome::kernel_panic:
        return "panic";
    case core::Outcome::boot_timeout:
    case core::Outcome::workload_timeout:
    case core::Outcome::console_silence:
    case core::Outcome::time_limit:
        return "hang";
    case core::Outcome::wrong_output:
        return "wrong-output";
    default:
        return "";
    }
}

namespace {

// Counted under errors: not interrupted, not the machinery's failure, not a hang or panic.
bool usable_for_errors(const core::Sample& sample) {
    return sample.outcome != core::Outcome::aborted &&
           sample.outcome != core::Outcome::infra_error && !broken(sample);
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
        if (!usable_for_errors(sample))
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
        if (!usable_for_errors(sample))
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
    case CriterionKind::outcome:
        if (broken_class(sample.outcome) == criterion.pattern)
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
        return value ? criterion.metric + " " + util::compact(*value)
                     : "ok, but the sample has no metric " + criterion.metric;
    }
    if (const auto* line = matching_line(criterion, sample, model))
        return outcome + ": " + line->line;
    if (!sample.lines.empty() && failed(sample))
        return outcome + ": " + sample.lines.front().line;
    if (std::string why = core::why_not_ok(sample); !why.empty())
        return outcome + ": " + why;
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

} // namespace rig::bisect
