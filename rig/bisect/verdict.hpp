// SPDX-License-Identifier: MIT
// The pure part of a bisect: criteria, what one sample says under a criterion, how many
// samples a commit needs, and the verdict on a commit from its samples. No I/O, so every
// rule is unit-tested with made-up samples.
#pragma once

#include "core/sample.hpp"
#include "core/significance.hpp"
#include "core/status.hpp"
#include "util/error.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rig::bisect {

enum class CriterionKind {
    errors,    // the bad endpoint's error families, held against GOOD's
    signature, // an error line matching a regular expression
    duration,  // the workload's guest-measured time
    metric,    // one of the sample's metrics, such as a count of 9p requests
    outcome,   // the guest panicked (outcome:panic), hung (outcome:hang) or produced wrong
               // output (output, outcome:wrong-output)
};

struct Criterion {
    CriterionKind kind = CriterionKind::errors;
    std::string pattern;     // signature: ECMAScript regex, matched against line and signature;
                             // outcome: "panic", "hang" or "wrong-output"
    double threshold = 0.10; // duration: bad is at least this much slower than good
    std::string metric;      // metric: the metric's name, as samples store it
    // metric: bad against good, signed (+0.5: at least 50% higher, -0.2: at least 20%
    // lower); none: bad differs from good in whichever direction the endpoints show.
    std::optional<double> change;
    std::string text() const; // as the user writes it; parse_criterion(text()) gives it back
};

// "errors", "signature:REGEX", "duration", "duration:+N%", "metric:NAME",
// "metric:NAME:+N%" / "metric:NAME:-N%", "output" (outcome:wrong-output), "outcome:panic"
// or "outcome:hang". Usage errors name the text.
Expected<Criterion> parse_criterion(std::string_view text);

// What one sample tells about its commit.
enum class SampleClass {
    reproduces, // shows the regression the criterion asks about
    clean,      // ran and does not show it (duration: a usable timing)
    stray,      // errors: failed only as GOOD fails too, about as often: no evidence
    unsure,     // errors: failed in a way neither endpoint explains: asks for more samples
    unusable,   // a boot failure, hang or other failure the criterion does not ask about
    infra,      // the machinery failed: retried, not data
    aborted,    // rig was interrupted: redone, not data
};
std::string_view to_string(SampleClass value);

// Boot failures, hangs (a panic, a boot or workload timeout, silence, a job's time limit)
// and wrong output: only an outcome criterion asks about them, or a signature criterion
// whose pattern matches what the guest printed.
bool broken(const core::Sample& sample);
// The outcome criterion's classes: "panic" (a kernel panic), "hang" (a boot or workload
// timeout, silence, a job's time limit) and "wrong-output"; "" for any other outcome.
std::string_view broken_class(core::Outcome outcome);
// The family of a failed sample that printed no error line saying what failed: a failure
// all the same.
inline constexpr std::string_view k_silent_family = "(no error line)";

// The error families (core::family_of) of a failed sample's error lines that say what
// failed: make's "*** [...] Error N" follows any failure and counts only when nothing
// else was printed. k_silent_family when none; empty for a sample that did not fail.
std::set<std::string> failure_families(const core::Sample& sample);

// One error family as the endpoints showed it.
struct Family {
    std::string example; // one real line of it, as printed: BAD's first, else GOOD's
    int bad = 0;         // BAD's usable samples that showed it
    int good = 0;        // GOOD's
};

// What the `errors` criterion holds a commit's failures against, made from the endpoints'
// samples. Families, not lines: a caching bug fails on whichever file it meets.
struct ErrorModel {
    std::map<std::string, Family> families;
    int bad_samples = 0;  // usable samples (not hung, panicked, infra or aborted) at BAD
    int good_samples = 0; // at GOOD; 0 while GOOD is not measured
    // The regression: a failed sample with one of these reproduces.
    std::set<std::string> targets;
    // Stray: GOOD shows them about as often as BAD does. A failure of these alone is no
    // evidence either way (one flaky test must not steer the bisect).
    std::set<std::string> baseline;
    int reproduced = 0; // BAD's samples that show a target: the one count of BAD's rate
    // Set when the endpoints leave nothing to bisect: why, for the user.
    std::optional<std::string> problem;
};

// Baseline: GOOD's families that BAD does not show significantly more often (Fisher's
// exact test, one-sided, at `alpha`). Targets: the other families BAD showed in two or
// more samples and in at least half of its failing ones, or significantly more often
// than GOOD. Before GOOD is measured (`good` empty), nothing is baseline.
ErrorModel error_model(const std::vector<core::Sample>& bad, const std::vector<core::Sample>& good,
                       double alpha = 0.05);

// BAD under errors: it failed, but no family stood in two of its samples yet, which
// is no more than a flake shows. The endpoint takes more samples, up to its budget.
bool bad_needs_more(const std::vector<core::Sample>& bad);

// The model in words, one real line per family with its counts at each endpoint:
// "regression: <line> (3 of 3 at BAD, 0 of 4 at GOOD)" and "stray, GOOD fails so too:
// <line> (1 of 3 at BAD, 1 of 4 at GOOD)"; empty when there is no such family.
std::string describe_regression(const ErrorModel& model);
std::string describe_strays(const ErrorModel& model);

// `model` is error_model() of the endpoints (errors only; ignored by other criteria). A
// model of no BAD samples counts every failure as reproducing: what BAD's own samples are
// counted by. Under duration and metric, a sample is clean when it ran and carries its
// value, else unusable: a sample that lacks the metric has no value, not 0.
SampleClass classify_sample(const Criterion& criterion, const core::Sample& sample,
                            const ErrorModel& model);

// The number a duration or metric criterion compares: the guest's seconds, or the
// metric's value. nullopt for other criteria and for samples that lack the metric.
std::optional<double> measured_value(const Criterion& criterion, const core::Sample& sample);

// Why a sample counts as it does, in one line, for the evidence column.
std::string sample_evidence(const Criterion& criterion, const core::Sample& sample,
                            const ErrorModel& model);

// Functional criteria: with `reproduced` of `total` usable samples at the bad endpoint,
// the rate is taken as its lower confidence bound (k_rate_level, Clopper-Pearson): three
// of three is not proof that the bug shows every time, and two of three may be a rate
// of one in three. Then the smallest n with (1 - rate)^n <= 1 - confidence, at least 2
// and at most `cap`.
inline constexpr double k_rate_level = 0.8;
struct SamplePlan {
    double rate = 0;       // the rate used
    int samples = 0;       // per commit, for a good verdict
    double confidence = 0; // 1 - (1 - rate)^samples: a bad commit shows within that many
};
SamplePlan plan_samples(int reproduced, int total, double confidence, int cap = 10);
// The verification's: the culprit's parent must pass at the confidence a bisect of two
// independent good verdicts would have, 1 - (1 - confidence)^2, with twice the cap.
SamplePlan plan_verification(int reproduced, int total, double confidence, int cap = 10);

// What to do with a commit after its samples so far: a verdict, or one more sample.
struct Decision {
    std::optional<core::Verdict> verdict; // nullopt: take another sample
    std::string reason;
};

// Functional: bad as soon as one sample reproduces; skip when a sample was unusable;
// good after `needed` clean samples. Stray and unsure samples count neither way; after
// `budget` samples without a verdict the commit is unsure. Infra and aborted samples are
// ignored here (the driver retries them).
Decision decide_functional(const std::vector<SampleClass>& samples, int needed, int budget);

// The culprit of a functional bisect against the commits before it (its parent, which
// passed, and GOOD): `parent_reproduced` of their `parent_samples` usable samples
// reproduced (0 unless a target is a family GOOD shows too, more rarely). Bad once the
// culprit reproduces significantly more often (Fisher's exact test, one-sided, at
// k_verify_alpha); good when none of `budget` samples reproduces; unsure when the budget
// ends between; skip on an unusable sample. A flaky failure that both show alike never
// verifies.
inline constexpr double k_verify_alpha = 0.001;
Decision decide_against_parent(const std::vector<SampleClass>& samples, int parent_reproduced,
                               int parent_samples, int budget);

// Performance: the commit's timings against both calibrated endpoints, each compared
// with Welch's t-test (Mann-Whitney once both sides have 8 samples) at `alpha`, and
// placed between them by its median. Bad when it sits in the third next to bad and
// differs from good (slower) or not from bad; good the other way round. Otherwise more
// samples up to `budget`, then unsure: rig skips the commit rather than guess, and the
// bisect ends with a range if it must.
struct Calibration {
    std::vector<double> good;
    std::vector<double> bad;
};
Decision decide_duration(const Calibration& calibration, const std::vector<double>& timings,
                         int unusable, int initial, int budget, double alpha = 0.05);
// The test that compares `a` values with `b` in decide_duration and decide_metric.
core::Test difference_test(size_t a, size_t b);

// The endpoints under a duration criterion: bad must be slower than good by the
// threshold on medians, and significantly so. An error message when not.
std::optional<std::string> check_duration_endpoints(const Calibration& calibration,
                                                    double threshold, double alpha = 0.05);

// A metric criterion. Counts are nearly deterministic, so the endpoints' own spread says
// how many samples a commit needs. When the endpoints are separated (BAD's range entirely
// beyond GOOD's, in the criterion's direction) and the gap between their medians is at
// least k_tiny_spread_factor times the larger half-range, one sample per commit decides
// by its side of the midpoint between the medians. Otherwise a commit is decided as under
// duration: thirds and tests against both endpoints, more samples, unsure.
enum class MetricRule { midpoint, statistical };

inline constexpr double k_tiny_spread_factor = 4;

// One endpoint's values: what the report states.
struct Spread {
    size_t n = 0;
    double median = 0;
    double min = 0;
    double max = 0;
    double cv = 0; // coefficient of variation: stddev / mean; 0 when the mean is 0
};
Spread spread_of(const std::vector<double>& values);
// "median 40 (40-41, CV 1.41%, n=3)"
std::string to_text(const Spread& spread);

struct MetricPlan {
    Calibration calibration;
    Spread good;
    Spread bad;
    MetricRule rule = MetricRule::statistical;
    double midpoint = 0; // between the endpoints' medians
    // Set when the endpoints do not test as the criterion asks: too few values, no
    // difference, the wrong direction or too small a change, or not significant.
    std::optional<std::string> problem;
};
MetricPlan plan_metric(const Criterion& criterion, Calibration calibration, double alpha = 0.05);

// The plan in one line, for the progress output and the report: the metric, each
// endpoint's median, min-max, CV and n, and the rule.
std::string describe_plan(const Criterion& criterion, const MetricPlan& plan);

// A commit's verdict from its values under the plan. Midpoint: bad once all of at least
// `initial` values lie beyond the midpoint toward BAD, good once all lie toward GOOD; a
// value on the midpoint or a split takes more up to `budget`, then unsure. Statistical:
// decide_duration's rule. Skip when a sample was unusable.
Decision decide_metric(const MetricPlan& plan, const std::vector<double>& values, int unusable,
                       int initial, int budget, double alpha = 0.05);

} // namespace rig::bisect
