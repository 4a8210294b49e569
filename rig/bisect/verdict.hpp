// SPDX-License-Identifier: MIT
// The pure part of a bisect: criteria, what one sample says under a criterion, how many
// samples a commit needs, and the verdict on a commit from its samples. No I/O, so every
// rule is unit-tested with made-up samples.
#pragma once

#include "core/sample.hpp"
#include "core/significance.hpp"
#include "core/status.hpp"
#include "util/error.hpp"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rig::bisect {

enum class CriterionKind {
    errors,    // the bad endpoint's error signatures
    signature, // an error line matching a regular expression
    duration,  // the workload's guest-measured time
    metric,    // one of the sample's metrics, such as a count of 9p requests
};

struct Criterion {
    CriterionKind kind = CriterionKind::errors;
    std::string pattern;     // signature: ECMAScript regex, matched against line and signature
    double threshold = 0.10; // duration: bad is at least this much slower than good
    std::string metric;      // metric: the metric's name, as samples store it
    // metric: bad against good, signed (+0.5: at least 50% higher, -0.2: at least 20%
    // lower); none: bad differs from good in whichever direction the endpoints show.
    std::optional<double> change;
    std::string text() const; // as the user writes it; parse_criterion(text()) gives it back
};

// "errors", "signature:REGEX", "duration", "duration:+N%", "metric:NAME" or
// "metric:NAME:+N%" / "metric:NAME:-N%". Usage errors name the text.
Expected<Criterion> parse_criterion(std::string_view text);

// What one sample tells about its commit.
enum class SampleClass {
    reproduces, // shows the regression the criterion asks about
    clean,      // ran and does not show it (duration: a usable timing)
    unusable,   // a boot failure, hang or other failure the criterion does not ask about
    infra,      // the machinery failed: retried, not data
    aborted,    // rig was interrupted: redone, not data
};
std::string_view to_string(SampleClass value);

// The signatures that mark the regression for `errors`: those seen in at least half of
// the bad endpoint's failing samples; of those, the kernel's own lines when there are
// any, else the workload's without make's generic "*** Error" lines. A stray line of
// another signature then does not make a commit bad. Empty when the failures printed no
// error line: the outcome decides.
std::set<std::string> regression_signatures(const std::vector<core::Sample>& bad_samples);

// `targets` is regression_signatures() of the bad endpoint (errors only). Under duration
// and metric, a sample is clean when it ran and carries its value, else unusable: a
// sample that lacks the metric has no value, not 0.
SampleClass classify_sample(const Criterion& criterion, const core::Sample& sample,
                            const std::set<std::string>& targets);

// The number a duration or metric criterion compares: the guest's seconds, or the
// metric's value. nullopt for other criteria and for samples that lack the metric.
std::optional<double> measured_value(const Criterion& criterion, const core::Sample& sample);

// Why a sample counts as it does, in one line, for the evidence column.
std::string sample_evidence(const Criterion& criterion, const core::Sample& sample,
                            const std::set<std::string>& targets);

// Functional criteria: with a reproduction rate p at the bad endpoint (reproduced of
// total usable samples), the smallest n with (1 - p)^n <= 1 - confidence, at least 2 and
// at most `cap`. p is taken as at most total/(total + 1): three of three is not proof
// that the bug shows every time.
struct SamplePlan {
    double rate = 0;       // the rate used
    int samples = 0;       // per commit, for a good verdict
    double confidence = 0; // 1 - (1 - rate)^samples: a bad commit shows within that many
};
SamplePlan plan_samples(int reproduced, int total, double confidence, int cap = 10);

// What to do with a commit after its samples so far: a verdict, or one more sample.
struct Decision {
    std::optional<core::Verdict> verdict; // nullopt: take another sample
    std::string reason;
};

// Functional: bad as soon as one sample reproduces; skip when a sample was unusable;
// good after `needed` clean samples. Infra and aborted samples are ignored here (the
// driver retries them).
Decision decide_functional(const std::vector<SampleClass>& samples, int needed);

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
