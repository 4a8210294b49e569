// SPDX-License-Identifier: MIT
// Tests of bisect/: criteria, sample classes, sample counts, verdicts (functional, duration,
// metric and its endpoint calibration), git's bisect output, git bisect in rig's own
// repository, the stored settings and steps.
#include "bisect/bisect.hpp"
#include "bisect/config_line.hpp"
#include "bisect/context.hpp"
#include "bisect/git.hpp"
#include "bisect/verdict.hpp"
#include "core/evidence.hpp"
#include "fake_git_history.hpp"
#include "full_records.hpp"
#include "git_run.hpp"
#include "proc/process.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <gtest/gtest.h>

using namespace rig::bisect;
using rig::core::Outcome;
using rig::core::Sample;
using rig::core::Verdict;
namespace fs = std::filesystem;

namespace {

Sample sample(Outcome outcome, std::vector<std::string> signatures = {}, double seconds = 10) {
    Sample out;
    out.outcome = outcome;
    out.guest_seconds = seconds;
    for (const auto& signature : signatures)
        out.lines.push_back(
            {rig::core::Severity::error, "dmesg", signature + " (line)", signature});
    return out;
}

Criterion criterion(const std::string& text) {
    auto parsed = parse_criterion(text);
    EXPECT_TRUE(parsed) << text;
    return parsed ? *parsed : Criterion{};
}

} // namespace

TEST(BisectCriterion, ParsesAndPrintsBack) {
    EXPECT_EQ(criterion("errors").kind, CriterionKind::errors);
    EXPECT_EQ(criterion("signature:EBADF|EIO").pattern, "EBADF|EIO");
    EXPECT_EQ(criterion("duration").threshold, 0.10);
    EXPECT_DOUBLE_EQ(criterion("duration:+25%").threshold, 0.25);
    EXPECT_DOUBLE_EQ(criterion("duration:5%").threshold, 0.05);
    for (const char* text :
         {"errors", "signature:9p: .* refused", "duration:+10%", "duration:+2.5%", "outcome:panic",
          "outcome:hang", "outcome:wrong-output"})
        EXPECT_EQ(criterion(text).text(), text);
    // `output` is the outcome wrong-output.
    EXPECT_EQ(criterion("output").kind, CriterionKind::outcome);
    EXPECT_EQ(criterion("output").text(), "outcome:wrong-output");
    for (const char* bad : {"", "error", "signature:", "signature:(", "duration:10", "duration:+0%",
                            "duration:+x%", "slower", "outcome:", "outcome:oops"}) {
        auto parsed = parse_criterion(bad);
        ASSERT_FALSE(parsed) << bad;
        EXPECT_EQ(parsed.error().kind, rig::ErrorKind::usage);
    }
}

TEST(BisectVerdict, BadsMajorityFamilyIsTheRegressionAndAFailureIsNeverClean) {
    std::vector<Sample> bad{sample(Outcome::workload_failed, {"9p: write refused", "stray A"}),
                            sample(Outcome::workload_failed, {"9p: write refused"}),
                            sample(Outcome::workload_failed, {"9p: write refused", "stray B"}),
                            sample(Outcome::ok)};
    ErrorModel model = error_model(bad, {sample(Outcome::ok), sample(Outcome::ok)});
    EXPECT_EQ(model.targets,
              (std::set<std::string>{rig::core::family_of("9p: write refused (line)")}));
    EXPECT_EQ(model.reproduced, 3);
    EXPECT_EQ(model.bad_samples, 4);
    EXPECT_FALSE(model.problem);
    Criterion errors = criterion("errors");
    EXPECT_EQ(classify_sample(errors, bad[0], model), SampleClass::reproduces);
    // A commit whose only error is another family is not clean: nobody knows it yet.
    EXPECT_EQ(classify_sample(errors, sample(Outcome::errors, {"stray C"}), model),
              SampleClass::unsure);
    EXPECT_EQ(classify_sample(errors, sample(Outcome::ok), model), SampleClass::clean);
    // Before the model is made, every failure counts: what BAD's own samples are counted by.
    EXPECT_EQ(classify_sample(errors, sample(Outcome::workload_failed), {}),
              SampleClass::reproduces);
}

TEST(BisectVerdict, SilentFailuresAndMakesSummary) {
    auto with = [](Sample sample, const std::string& source, const std::string& line) {
        sample.lines.push_back({rig::core::Severity::error, source, line, line});
        return sample;
    };
    Sample failed = with(sample(Outcome::workload_failed), "workload",
                         "make: *** [Makefile:12: units/unit_1.o] Error 1");
    failed = with(failed, "workload", "units/unit_1.c:3:10: error: 'x' undeclared");
    // Make's summary follows any failure: it is not the regression's family.
    EXPECT_EQ(failure_families(failed), (std::set<std::string>{"error: 'x' undeclared"}));
    // A failure that printed make's line alone printed nothing that says what failed.
    Sample silent = with(sample(Outcome::workload_failed), "workload",
                         "make: *** [Makefile:12: units/unit_2.o] Error 1");
    EXPECT_EQ(failure_families(silent), (std::set<std::string>{std::string(k_silent_family)}));
    EXPECT_EQ(failure_families(sample(Outcome::ok)), std::set<std::string>{});
    ErrorModel model = error_model({failed, failed}, {sample(Outcome::ok), sample(Outcome::ok)});
    EXPECT_EQ(classify_sample(criterion("errors"), silent, model), SampleClass::unsure);
    // BAD failing silently makes silence the regression.
    ErrorModel quiet = error_model({silent, silent}, {sample(Outcome::ok), sample(Outcome::ok)});
    EXPECT_EQ(classify_sample(criterion("errors"), silent, quiet), SampleClass::reproduces);
    EXPECT_EQ(classify_sample(criterion("errors"), failed, quiet), SampleClass::unsure);
}

TEST(BisectVerdict, BootFailuresAreUnusableInfraAndAbortAreNotData) {
    Criterion errors = criterion("errors");
    for (Outcome outcome : {Outcome::kernel_panic, Outcome::boot_timeout, Outcome::workload_timeout,
                            Outcome::console_silence})
        EXPECT_EQ(classify_sample(errors, sample(outcome), {}), SampleClass::unusable);
    EXPECT_EQ(classify_sample(errors, sample(Outcome::infra_error), {}), SampleClass::infra);
    EXPECT_EQ(classify_sample(errors, sample(Outcome::aborted), {}), SampleClass::aborted);
    // A signature criterion that asks about a panic counts it.
    Criterion panic = criterion("signature:Kernel panic");
    EXPECT_EQ(
        classify_sample(panic, sample(Outcome::kernel_panic, {"Kernel panic - not syncing"}), {}),
        SampleClass::reproduces);
    EXPECT_EQ(classify_sample(panic, sample(Outcome::boot_timeout), {}), SampleClass::unusable);
    // The outcome criteria ask about their own class of broken sample: the other class is
    // no data, a sample that ran to its end is clean, whatever it printed.
    Criterion panicked = criterion("outcome:panic");
    Criterion hung = criterion("outcome:hang");
    EXPECT_EQ(classify_sample(panicked, sample(Outcome::kernel_panic), {}),
              SampleClass::reproduces);
    EXPECT_EQ(classify_sample(panicked, sample(Outcome::workload_timeout), {}),
              SampleClass::unusable);
    EXPECT_EQ(classify_sample(panicked, sample(Outcome::errors, {"EBADF"}), {}),
              SampleClass::clean);
    EXPECT_EQ(classify_sample(panicked, sample(Outcome::infra_error), {}), SampleClass::infra);
    for (Outcome outcome : {Outcome::boot_timeout, Outcome::workload_timeout,
                            Outcome::console_silence, Outcome::time_limit})
        EXPECT_EQ(classify_sample(hung, sample(outcome), {}), SampleClass::reproduces);
    EXPECT_EQ(classify_sample(hung, sample(Outcome::kernel_panic), {}), SampleClass::unusable);
    EXPECT_EQ(classify_sample(hung, sample(Outcome::ok), {}), SampleClass::clean);
    // Wrong output reproduces under `output`, whatever lines it came with; under errors it
    // is no data, as a panic is.
    Criterion output = criterion("output");
    EXPECT_EQ(classify_sample(output, sample(Outcome::wrong_output, {"output a.o: x"}), {}),
              SampleClass::reproduces);
    EXPECT_EQ(classify_sample(output, sample(Outcome::ok), {}), SampleClass::clean);
    EXPECT_EQ(classify_sample(output, sample(Outcome::kernel_panic), {}), SampleClass::unusable);
    EXPECT_EQ(classify_sample(criterion("errors"), sample(Outcome::wrong_output, {"x"}), {}),
              SampleClass::unusable);
    Criterion duration = criterion("duration");
    EXPECT_EQ(classify_sample(duration, sample(Outcome::ok), {}), SampleClass::clean);
    EXPECT_EQ(classify_sample(duration, sample(Outcome::workload_failed), {}),
              SampleClass::unusable);
}

TEST(BisectVerdict, SamplesPerCommitFollowTheReproductionRatesLowerBound) {
    // Always reproduces (3 of 3): the rate is at least 0.2^(1/3) = 0.585 with 80%
    // confidence, so 0.415^4 <= 0.05 needs 4.
    SamplePlan always = plan_samples(3, 3, 0.95);
    EXPECT_NEAR(always.rate, std::pow(0.2, 1.0 / 3), 1e-6);
    EXPECT_EQ(always.samples, 4);
    EXPECT_GE(always.confidence, 0.95);
    // Two of three may be a rate of one in three: more.
    EXPECT_EQ(plan_samples(2, 3, 0.95).samples, 9);
    // Half the time, seen in 10: at least 0.33, so 8.
    EXPECT_EQ(plan_samples(5, 10, 0.95).samples, 8);
    // Rarely: capped, and the confidence says what the cap buys.
    SamplePlan rare = plan_samples(1, 10, 0.95, 10);
    EXPECT_EQ(rare.samples, 10);
    EXPECT_NEAR(rare.confidence, 1 - std::pow(1 - rare.rate, 10), 1e-9);
    EXPECT_LT(rare.confidence, 0.95);
    // Never less than two.
    EXPECT_EQ(plan_samples(20, 20, 0.5).samples, 2);
    EXPECT_EQ(plan_samples(0, 3, 0.95).samples, 0);
    // The verification: (1 - 0.95)^2 = 0.0025 left, with twice the cap.
    SamplePlan check = plan_verification(3, 3, 0.95);
    EXPECT_EQ(check.samples, 7);
    EXPECT_GE(check.confidence, 0.9975);
    EXPECT_EQ(plan_verification(1, 10, 0.95, 10).samples, 20);
}

TEST(BisectVerdict, FunctionalVerdicts) {
    using C = SampleClass;
    EXPECT_EQ(decide_functional({C::clean, C::reproduces}, 3, 6).verdict, Verdict::bad);
    EXPECT_EQ(decide_functional({C::unusable}, 3, 6).verdict, Verdict::skip);
    EXPECT_FALSE(decide_functional({C::clean, C::clean}, 3, 6).verdict);
    EXPECT_EQ(decide_functional({C::clean, C::clean, C::clean}, 3, 6).verdict, Verdict::good);
    EXPECT_FALSE(decide_functional({}, 2, 4).verdict);
    // Strays and unsure samples count neither way: more, then unsure at the budget.
    EXPECT_FALSE(decide_functional({C::clean, C::stray, C::unsure, C::clean}, 3, 6).verdict);
    EXPECT_EQ(decide_functional({C::clean, C::stray, C::unsure, C::clean, C::clean}, 3, 6).verdict,
              Verdict::good);
    auto stuck =
        decide_functional({C::unsure, C::unsure, C::clean, C::unsure, C::stray, C::clean}, 3, 6);
    EXPECT_EQ(stuck.verdict, Verdict::unsure);
    EXPECT_NE(stuck.reason.find("2 of 3 clean"), std::string::npos) << stuck.reason;
}

TEST(BisectVerdict, CulpritAgainstTheCommitsBeforeIt) {
    using C = SampleClass;
    // 15 clean before it (parent and GOOD): three of three at the culprit is not yet beyond
    // p < 0.001 (1 in 816), four of four is (1 in 3876).
    std::vector<C> three(3, C::reproduces), four(4, C::reproduces);
    EXPECT_FALSE(decide_against_parent(three, 0, 15, 14).verdict);
    auto bad = decide_against_parent(four, 0, 15, 14);
    EXPECT_EQ(bad.verdict, Verdict::bad);
    EXPECT_NE(bad.reason.find("reproduces in 4 of 4 against 0 of 15 before it"), std::string::npos)
        << bad.reason;
    // A flake both show alike never verifies: unsure at the budget.
    std::vector<C> flaky(14, C::clean);
    flaky[3] = flaky[9] = C::reproduces;
    EXPECT_EQ(decide_against_parent(flaky, 1, 15, 14).verdict, Verdict::unsure);
    EXPECT_EQ(decide_against_parent(std::vector<C>(14, C::clean), 0, 15, 14).verdict,
              Verdict::good);
    EXPECT_EQ(decide_against_parent({C::unusable}, 0, 15, 14).verdict, Verdict::skip);
}

TEST(BisectVerdict, DurationVerdictsAgainstBothEndpoints) {
    Calibration calibration{{10.0, 10.4, 9.8, 10.1}, {14.9, 15.3, 15.0, 14.6}};
    EXPECT_EQ(decide_duration(calibration, {15.1, 14.8, 15.2}, 0, 3, 9).verdict, Verdict::bad);
    EXPECT_EQ(decide_duration(calibration, {10.2, 9.9, 10.0}, 0, 3, 9).verdict, Verdict::good);
    // Fewer than the initial samples: more.
    EXPECT_FALSE(decide_duration(calibration, {15.1, 14.8}, 0, 3, 9).verdict);
    // Half-way and noisy: more samples within the budget, then unsure, never a guess.
    std::vector<double> between{12.4, 12.6, 12.5};
    EXPECT_FALSE(decide_duration(calibration, between, 0, 3, 9).verdict);
    EXPECT_EQ(decide_duration(calibration, between, 0, 3, 3).verdict, Verdict::unsure);
    EXPECT_EQ(decide_duration(calibration, {10.0, 10.1, 10.2}, 1, 3, 9).verdict, Verdict::skip);
}

// Seen under TCG: timings so tight that a host which got 6% faster made the culprit
// differ significantly from both endpoints. Its place next to bad decides.
TEST(BisectVerdict, DurationVerdictSurvivesHostDrift) {
    Calibration calibration{{4.75, 4.71, 4.40}, {14.58, 14.51, 14.75}};
    EXPECT_EQ(decide_duration(calibration, {13.57, 13.71, 13.72}, 0, 3, 6).verdict, Verdict::bad);
    EXPECT_EQ(decide_duration(calibration, {3.77, 3.67, 4.05}, 0, 3, 6).verdict, Verdict::good);
    // Half-way stays unsure however significant both tests are.
    EXPECT_EQ(decide_duration(calibration, {9.5, 9.6, 9.55}, 0, 3, 3).verdict, Verdict::unsure);
}

// Seen under TCG with a busy host: one slow GOOD sample made GOOD so wide that a commit
// 42% of the way to BAD did not differ from it, while it did differ from BAD. That is not
// "good": named so, the bisect verified a wrong culprit.
TEST(BisectVerdict, AWideEndpointLendsNoVerdictToACommitHalfWay) {
    Calibration calibration{{14.51, 4.00, 6.54}, {28.09, 25.66, 29.72}};
    std::vector<double> halfway{15.90, 15.67, 14.80};
    EXPECT_FALSE(decide_duration(calibration, halfway, 0, 3, 4).verdict);
    EXPECT_EQ(decide_duration(calibration, halfway, 0, 3, 3).verdict, Verdict::unsure);
    // Near an endpoint and not different from it: that endpoint's verdict.
    EXPECT_EQ(decide_duration(calibration, {5.1, 6.0, 7.2}, 0, 3, 3).verdict, Verdict::good);
    EXPECT_EQ(decide_duration(calibration, {27.0, 28.5, 26.2}, 0, 3, 3).verdict, Verdict::bad);
}

TEST(BisectVerdict, DurationEndpointsMustDifferByTheThreshold) {
    EXPECT_FALSE(check_duration_endpoints({{10, 10.2, 9.9}, {13, 13.1, 12.8}}, 0.10));
    auto same = check_duration_endpoints({{10, 10.2, 9.9}, {10.1, 10.3, 9.8}}, 0.10);
    ASSERT_TRUE(same);
    EXPECT_NE(same->find("not reproducible at BAD"), std::string::npos) << *same;
    // 12 % slower on medians, but within the noise: not significant.
    auto noisy = check_duration_endpoints({{10, 14, 8}, {11.2, 15, 9}}, 0.10);
    ASSERT_TRUE(noisy);
    EXPECT_NE(noisy->find("not"), std::string::npos) << *noisy;
}

namespace {

Sample counted(double value, const std::string& name = "9p.work.getattr") {
    Sample out = sample(Outcome::ok);
    out.metrics.push_back({"9p.work.requests", value * 3, ""});
    out.metrics.push_back({name, value, ""});
    return out;
}

} // namespace

TEST(BisectMetric, ParsesAndPrintsBack) {
    Criterion plain = criterion("metric:9p.work.getattr");
    EXPECT_EQ(plain.kind, CriterionKind::metric);
    EXPECT_EQ(plain.metric, "9p.work.getattr");
    EXPECT_FALSE(plain.change);
    Criterion higher = criterion("metric:noop/9p.work.getattr:+50%");
    EXPECT_EQ(higher.metric, "noop/9p.work.getattr");
    ASSERT_TRUE(higher.change);
    EXPECT_DOUBLE_EQ(*higher.change, 0.5);
    EXPECT_DOUBLE_EQ(*criterion("metric:guest.cpu.system:-20%").change, -0.2);
    for (const char* text : {"metric:9p.work.getattr", "metric:noop/9p.work.getattr:+50%",
                             "metric:guest.cpu.system:-12.5%", "metric:9p.root.walk:+300%"})
        EXPECT_EQ(criterion(text).text(), text);
    // The sign says which way is bad: without one the text is a mistake, not a guess.
    for (const char* bad :
         {"metric:", "metric::+5%", "metric:9p.work.getattr:50%", "metric:9p.work.getattr:+0%",
          "metric:9p.work.getattr:-100%", "metric:9p.work.getattr:", "metric:9p.work.getattr:+x%",
          "metric:a:b:+5%", "metric:9p work", "metric:a:+5"}) {
        auto parsed = parse_criterion(bad);
        ASSERT_FALSE(parsed) << bad;
        EXPECT_EQ(parsed.error().kind, rig::ErrorKind::usage);
        EXPECT_NE(parsed.error().message.find(bad), std::string::npos) << parsed.error().message;
    }
    EXPECT_NE(parse_criterion("metrics").error().message.find("metric:NAME"), std::string::npos);
}

TEST(BisectMetric, ASampleWithoutTheMetricIsUnusableNotZero) {
    Criterion getattr = criterion("metric:9p.work.getattr");
    EXPECT_EQ(classify_sample(getattr, counted(120), {}), SampleClass::clean);
    EXPECT_EQ(*measured_value(getattr, counted(120)), 120);
    // Zero is a value; absence is not.
    EXPECT_EQ(classify_sample(getattr, counted(0), {}), SampleClass::clean);
    Sample lacking = counted(120, "9p.work.walk");
    EXPECT_EQ(classify_sample(getattr, lacking, {}), SampleClass::unusable);
    EXPECT_FALSE(measured_value(getattr, lacking));
    EXPECT_NE(sample_evidence(getattr, lacking, {}).find("no metric 9p.work.getattr"),
              std::string::npos)
        << sample_evidence(getattr, lacking, {});
    EXPECT_EQ(sample_evidence(getattr, counted(120), {}), "9p.work.getattr 120");
    Sample failed = counted(120);
    failed.outcome = Outcome::workload_failed;
    EXPECT_EQ(classify_sample(getattr, failed, {}), SampleClass::unusable);
    EXPECT_EQ(classify_sample(getattr, sample(Outcome::infra_error), {}), SampleClass::infra);
}

TEST(BisectMetric, ATinySpreadLetsOneSamplePerCommitDecide) {
    MetricPlan plan =
        plan_metric(criterion("metric:9p.work.getattr:+50%"), {{40, 41, 40}, {400, 404, 401}});
    ASSERT_FALSE(plan.problem) << *plan.problem;
    EXPECT_EQ(plan.rule, MetricRule::midpoint);
    EXPECT_DOUBLE_EQ(plan.midpoint, 220.5);
    EXPECT_EQ(plan.good.median, 40);
    EXPECT_EQ(plan.bad.min, 400);
    EXPECT_EQ(plan.bad.max, 404);
    EXPECT_GT(plan.bad.cv, 0);
    EXPECT_LT(plan.bad.cv, 0.01);
    // One value decides, either way, even far outside the endpoints.
    EXPECT_EQ(decide_metric(plan, {402}, 0, 1, 10).verdict, Verdict::bad);
    EXPECT_EQ(decide_metric(plan, {41}, 0, 1, 10).verdict, Verdict::good);
    EXPECT_EQ(decide_metric(plan, {900}, 0, 1, 10).verdict, Verdict::bad);
    EXPECT_EQ(decide_metric(plan, {0}, 0, 1, 10).verdict, Verdict::good);
    EXPECT_FALSE(decide_metric(plan, {}, 0, 1, 10).verdict);
    // A sample without the metric, or one that failed, skips the commit.
    EXPECT_EQ(decide_metric(plan, {}, 1, 1, 10).verdict, Verdict::skip);
    // On the midpoint: another sample, then unsure rather than a guess.
    EXPECT_FALSE(decide_metric(plan, {220.5}, 0, 1, 2).verdict);
    EXPECT_EQ(decide_metric(plan, {220.5, 220.5}, 0, 1, 2).verdict, Verdict::unsure);
    // Verification takes several, and all must fall on one side.
    EXPECT_FALSE(decide_metric(plan, {402, 401}, 0, 3, 3).verdict);
    EXPECT_EQ(decide_metric(plan, {402, 401, 399}, 0, 3, 3).verdict, Verdict::bad);
    EXPECT_EQ(decide_metric(plan, {402, 40, 399}, 0, 3, 3).verdict, Verdict::unsure);
    std::string text = describe_plan(criterion("metric:9p.work.getattr:+50%"), plan);
    for (const char* part : {"9p.work.getattr", "GOOD median 40 (40-41, CV", "n=3",
                             "BAD median 401 (400-404", "one sample per commit", "220.5"})
        EXPECT_NE(text.find(part), std::string::npos) << part << " in " << text;
}

TEST(BisectMetric, ACountThatFellIsBadTheOtherWayRound) {
    MetricPlan plan =
        plan_metric(criterion("metric:9p.work.read:-50%"), {{1000, 1000, 1000}, {10, 10, 10}});
    ASSERT_FALSE(plan.problem) << *plan.problem;
    EXPECT_EQ(plan.rule, MetricRule::midpoint);
    EXPECT_EQ(decide_metric(plan, {12}, 0, 1, 10).verdict, Verdict::bad);
    EXPECT_EQ(decide_metric(plan, {990}, 0, 1, 10).verdict, Verdict::good);
    // Without a threshold the endpoints show the direction.
    EXPECT_EQ(plan_metric(criterion("metric:9p.work.read"), {{1000, 1000}, {10, 10}}).rule,
              MetricRule::midpoint);
}

TEST(BisectMetric, AWideSpreadFallsBackToTheStatisticalTests) {
    Criterion seconds = criterion("metric:noop/seconds");
    // Separated, but the gap is under four times BAD's half-range.
    MetricPlan plan = plan_metric(seconds, {{10.0, 10.4, 9.8, 10.1}, {14.9, 17.3, 15.0, 13.6}});
    ASSERT_FALSE(plan.problem) << *plan.problem;
    EXPECT_EQ(plan.rule, MetricRule::statistical);
    EXPECT_FALSE(decide_metric(plan, {15.1}, 0, 3, 9).verdict);
    EXPECT_EQ(decide_metric(plan, {15.1, 14.8, 15.2}, 0, 3, 9).verdict, Verdict::bad);
    EXPECT_EQ(decide_metric(plan, {10.2, 9.9, 10.0}, 0, 3, 9).verdict, Verdict::good);
    EXPECT_EQ(decide_metric(plan, {12.4, 12.6, 12.5}, 0, 3, 3).verdict, Verdict::unsure);
    EXPECT_NE(describe_plan(seconds, plan).find("tested against both endpoints"), std::string::npos)
        << describe_plan(seconds, plan);
    // Overlapping ranges, yet significant with enough samples: statistical too.
    MetricPlan overlap = plan_metric(seconds, {{10, 11, 10.5, 10.2, 10.4, 10.6, 10.1, 10.3},
                                               {10.9, 12, 12.5, 12.2, 12.4, 12.6, 12.1, 12.3}});
    ASSERT_FALSE(overlap.problem) << *overlap.problem;
    EXPECT_EQ(overlap.rule, MetricRule::statistical);
    // A count that fell, decided statistically: the thirds are measured toward BAD.
    MetricPlan fell =
        plan_metric(criterion("metric:9p.work.read"), {{100, 90, 110, 104}, {50, 30, 70, 45}});
    ASSERT_FALSE(fell.problem) << *fell.problem;
    EXPECT_EQ(fell.rule, MetricRule::statistical);
    EXPECT_EQ(decide_metric(fell, {48, 44, 50}, 0, 3, 9).verdict, Verdict::bad);
    EXPECT_EQ(decide_metric(fell, {101, 97, 103}, 0, 3, 9).verdict, Verdict::good);
}

TEST(BisectMetric, EndpointsThatDoNotDifferAsAskedAreAnError) {
    Criterion getattr = criterion("metric:9p.work.getattr");
    auto same = plan_metric(getattr, {{40, 40, 40}, {40, 40, 40}});
    ASSERT_TRUE(same.problem);
    EXPECT_NE(same.problem->find("does not differ"), std::string::npos) << *same.problem;
    EXPECT_NE(same.problem->find("9p.work.getattr median 40 at BAD vs 40 at GOOD"),
              std::string::npos)
        << *same.problem;
    auto noisy = plan_metric(getattr, {{40, 80, 20}, {45, 85, 25}});
    ASSERT_TRUE(noisy.problem);
    EXPECT_NE(noisy.problem->find("not significant"), std::string::npos) << *noisy.problem;
    // Samples without the metric leave nothing to calibrate on.
    auto missing = plan_metric(getattr, {{40, 40, 40}, {400}});
    ASSERT_TRUE(missing.problem);
    EXPECT_NE(missing.problem->find("fewer than two samples with 9p.work.getattr"),
              std::string::npos)
        << *missing.problem;
}

TEST(BisectMetric, ASignedThresholdTheWrongWayOrTooSmallIsAnError) {
    auto lower = plan_metric(criterion("metric:9p.work.getattr:+50%"), {{400, 400}, {40, 40}});
    ASSERT_TRUE(lower.problem);
    EXPECT_NE(lower.problem->find("already bad at GOOD"), std::string::npos) << *lower.problem;
    EXPECT_NE(lower.problem->find("is not 50% higher"), std::string::npos) << *lower.problem;
    auto small = plan_metric(criterion("metric:9p.work.getattr:+50%"), {{100, 100}, {140, 140}});
    ASSERT_TRUE(small.problem);
    EXPECT_NE(small.problem->find("is not 50% higher"), std::string::npos) << *small.problem;
    auto higher = plan_metric(criterion("metric:9p.work.read:-20%"), {{100, 100}, {140, 140}});
    ASSERT_TRUE(higher.problem);
    EXPECT_NE(higher.problem->find("is not 20% lower"), std::string::npos) << *higher.problem;
    EXPECT_FALSE(
        plan_metric(criterion("metric:9p.work.getattr:+40%"), {{100, 100}, {150, 150}}).problem);
}

TEST(BisectGit, ParsesWhatGitBisectPrints) {
    auto next = parse_bisect_output("Bisecting: 3 revisions left to test after this (roughly 2 "
                                    "steps)\n[abc] c4\n",
                                    "abc");
    EXPECT_FALSE(next.done);
    EXPECT_EQ(next.next, "abc");
    auto found = parse_bisect_output("0123456789abcdef0123456789abcdef01234567 is the first bad "
                                     "commit\ncommit 0123...\n",
                                     "");
    EXPECT_TRUE(found.done);
    EXPECT_EQ(found.culprit, "0123456789abcdef0123456789abcdef01234567");
    auto range = parse_bisect_output("There are only 'skip'ped commits left to test.\nThe first "
                                     "bad commit could be any of:\naaaa\nbbbb\nWe cannot bisect "
                                     "more!\n",
                                     "");
    EXPECT_TRUE(range.done);
    EXPECT_TRUE(range.culprit.empty());
    EXPECT_EQ(range.candidates, (std::vector<std::string>{"aaaa", "bbbb"}));
}

namespace {

using rig::test::git;

// A linear history c1..c8; returns the commit ids, oldest first.
std::vector<std::string> history(const fs::path& repo) {
    fs::create_directories(repo);
    git(repo, {"init", "-q"});
    std::vector<std::string> commits;
    for (int i = 1; i <= 8; ++i) {
        std::string name = "file" + std::to_string(i);
        std::ofstream(repo / name) << i << "\n";
        git(repo, {"add", name});
        git(repo, {"commit", "-q", "-m", "c" + std::to_string(i)});
        commits.push_back(git(repo, {"rev-parse", "HEAD"}));
    }
    return commits;
}

} // namespace

TEST(BisectGit, BisectsInItsOwnRepositoryAndSkipsGiveARange) {
    rig::test::TempDir dir;
    auto commits = history(dir.path() / "user");
    auto opened = GitBisect::open(dir.path() / "rig", dir.path() / "user");
    ASSERT_TRUE(opened) << opened.error().message;
    GitBisect& bisect = *opened;
    EXPECT_EQ(*bisect.resolve("HEAD~7"), commits[0]);
    EXPECT_FALSE(bisect.resolve("no-such-rev"));
    EXPECT_EQ(*bisect.count(commits[0], commits[7]), 7u);
    EXPECT_EQ(bisect.describe(commits[2])->subject, "c3");
    EXPECT_EQ(*bisect.parent(commits[2]), commits[1]);

    // c5 is the first bad commit.
    auto state = bisect.start(commits[7], commits[0]);
    ASSERT_TRUE(state) << state.error().message;
    int steps = 0;
    while (!state->done && steps++ < 10) {
        size_t index = std::find(commits.begin(), commits.end(), state->next) - commits.begin();
        ASSERT_LT(index, commits.size());
        state = bisect.mark(index >= 4 ? Verdict::bad : Verdict::good, state->next);
        ASSERT_TRUE(state) << state.error().message;
    }
    EXPECT_EQ(state->culprit, commits[4]);
    EXPECT_LE(steps, 3);
    auto log = bisect.log();
    ASSERT_TRUE(log);
    EXPECT_NE(log->find("git bisect start"), std::string::npos) << *log;
    EXPECT_NE(log->find("# first bad commit: [" + commits[4] + "]"), std::string::npos) << *log;
    // The user's repository was not touched: no bisect refs there.
    EXPECT_EQ(git(dir.path() / "user", {"for-each-ref", "refs/bisect"}), "");

    // Skipping everything around the culprit ends with a range, not a name.
    state = bisect.start(commits[7], commits[0]);
    steps = 0;
    while (!state->done && steps++ < 10) {
        size_t index = std::find(commits.begin(), commits.end(), state->next) - commits.begin();
        Verdict verdict = index >= 5 ? Verdict::bad : index >= 3 ? Verdict::unsure : Verdict::good;
        state = bisect.mark(verdict, state->next);
        ASSERT_TRUE(state) << state.error().message;
    }
    EXPECT_TRUE(state->culprit.empty());
    EXPECT_GE(state->candidates.size(), 2u);

    // The revert of c5 on c8 as a patch for `git am`.
    fs::path patch = dir.path() / "revert.patch";
    auto written = bisect.write_revert_patch(commits[4], commits[7], patch);
    ASSERT_TRUE(written) << written.error().message;
    std::ifstream in(patch);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(text.find("Subject: [PATCH] Revert \"c5\""), std::string::npos) << text;
    EXPECT_NE(text.find("deleted file mode"), std::string::npos) << text;
}

// A posted patch becomes a commit with its diff; a config bisect's switches, mails without
// one, become commits on the same tree, read from the parent with no index. The same mails
// on the same base give the same commits again, as a resume needs.
TEST(BisectGit, ASeriesIsCommittedPatchByPatchAndAMailWithoutADiffKeepsTheTree) {
    rig::test::TempDir dir;
    auto commits = history(dir.path() / "user");
    auto opened = GitBisect::open(dir.path() / "rig", dir.path() / "user");
    ASSERT_TRUE(opened) << opened.error().message;
    const std::string patch = "From 1234 Mon Sep 17 00:00:00 2001\n"
                              "From: Ann Author <ann@example.org>\n"
                              "Date: Tue, 1 Dec 2026 10:00:00 +0000\n"
                              "Subject: [PATCH 1/1] add file9\n\n"
                              "Adds a ninth file.\n---\n"
                              "diff --git a/file9 b/file9\nnew file mode 100644\n"
                              "--- /dev/null\n+++ b/file9\n@@ -0,0 +1 @@\n+9\n";
    std::vector<std::string> mails{patch};
    auto switches = config_switches({{"CONFIG_A", "y"}}, {{"CONFIG_B", "y"}});
    for (const std::string& mail : config_line_mails(switches, "from a to b"))
        mails.push_back(mail);
    ASSERT_EQ(mails.size(), 3u);
    auto line = opened->commit_series(commits[7], mails);
    ASSERT_TRUE(line) << line.error().message;
    ASSERT_EQ(line->size(), 3u);
    const fs::path rig_repo = dir.path() / "rig";
    auto tree = [&](const std::string& sha) {
        return git(rig_repo, {"rev-parse", sha + "^{tree}"});
    };
    EXPECT_NE(tree((*line)[0]), tree(commits[7]));
    EXPECT_EQ(git(rig_repo, {"show", (*line)[0] + ":file9"}), "9");
    EXPECT_EQ(tree((*line)[1]), tree((*line)[0]));
    EXPECT_EQ(tree((*line)[2]), tree((*line)[0]));
    EXPECT_EQ(*opened->parent((*line)[2]), (*line)[1]);
    EXPECT_EQ(opened->describe((*line)[0])->subject, "add file9");
    EXPECT_EQ(opened->describe((*line)[0])->author, "Ann Author <ann@example.org>");
    EXPECT_EQ(opened->describe((*line)[1])->subject, "config: CONFIG_A not set (was y)");
    EXPECT_EQ(opened->describe((*line)[2])->subject, "config: CONFIG_B=y (was not set)");
    auto again = opened->commit_series(commits[7], mails);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *line);
}

// A config bisect's line: every differing option once, by name, a missing one as not set;
// step k is GOOD's values with the first k switched, all wishes, and the last step is BAD.
TEST(BisectConfigLine, SwitchesInNameOrderAndStepsFromGoodToBad) {
    const rig::kernel::ConfigValues good{
        {"CONFIG_B", "y"}, {"CONFIG_A", "n"}, {"CONFIG_N", "64"}, {"CONFIG_SAME", "y"}};
    const rig::kernel::ConfigValues bad{
        {"CONFIG_B", "m"}, {"CONFIG_C", "y"}, {"CONFIG_N", "128"}, {"CONFIG_SAME", "y"}};
    auto line = config_switches(good, bad);
    ASSERT_EQ(line.size(), 3u);
    EXPECT_EQ(switch_text(line[0]), "CONFIG_B=m (was y)");
    EXPECT_EQ(switch_text(line[1]), "CONFIG_C=y (was not set)");
    EXPECT_EQ(switch_text(line[2]), "CONFIG_N=128 (was 64)");
    EXPECT_EQ(switch_text({"CONFIG_D", "y", "n"}), "CONFIG_D not set (was y)");

    auto first = config_step_options(good, line, 0);
    EXPECT_EQ(first.size(), good.size());
    EXPECT_EQ(first.at("CONFIG_B"), "?y");
    EXPECT_EQ(first.at("CONFIG_N"), "?64");
    auto second = config_step_options(good, line, 2);
    EXPECT_EQ(second.at("CONFIG_B"), "?m");
    EXPECT_EQ(second.at("CONFIG_C"), "?y");
    EXPECT_EQ(second.at("CONFIG_N"), "?64");
    auto last = config_step_options(good, line, line.size());
    for (const auto& [symbol, value] : bad)
        EXPECT_EQ(last.at(symbol), "?" + value) << symbol;

    auto mails = config_line_mails(line, "from base to base,debug");
    ASSERT_EQ(mails.size(), 3u);
    EXPECT_NE(mails[1].find("Subject: [PATCH 2/3] config: CONFIG_C=y (was not set)\n"),
              std::string::npos)
        << mails[1];
    EXPECT_EQ(mails[1].find("diff --git"), std::string::npos);
    EXPECT_EQ(config_line_mails(line, "from base to base,debug"), mails);
}

// The unit tests' stand-in bisects a line as git does: the same culprit, and a range when
// only skipped commits are left.
TEST(BisectGit, TheFakeHistoryBisectsALineAsGitDoes) {
    rig::test::FakeGitHistory fake(8);
    const auto& commits = fake.commits();
    auto bisect = fake.open();
    EXPECT_EQ(*bisect->resolve("HEAD~7"), commits[0]);
    EXPECT_EQ(*bisect->resolve("master"), commits[7]);
    EXPECT_FALSE(bisect->resolve("no-such-rev"));
    EXPECT_EQ(*bisect->count(commits[0], commits[7]), 7u);
    EXPECT_EQ(*bisect->parent(commits[2]), commits[1]);
    for (bool skips : {false, true}) {
        auto state = bisect->start(commits[7], commits[0]);
        ASSERT_TRUE(state) << state.error().message;
        int steps = 0;
        while (!state->done && steps++ < 10) {
            size_t index = std::find(commits.begin(), commits.end(), state->next) - commits.begin();
            Verdict verdict = index >= 5   ? Verdict::bad
                              : index >= 3 ? (skips ? Verdict::unsure : Verdict::bad)
                                           : Verdict::good;
            state = bisect->mark(verdict, state->next);
            ASSERT_TRUE(state) << state.error().message;
        }
        EXPECT_LE(steps, skips ? 5 : 3);
        if (skips) {
            EXPECT_TRUE(state->culprit.empty());
            EXPECT_EQ(state->candidates,
                      (std::vector<std::string>{commits[3], commits[4], commits[5]}));
        } else {
            EXPECT_EQ(state->culprit, commits[3]);
        }
    }
}

TEST(BisectSettings, EveryFieldOfTheListRoundTripsAsJson) {
    StartOptions options;
    options.scenario = "/x/s.yaml";
    options.cell = "cache=mmap,fs=9p";
    options.samples = 4;
    options.confidence = 0.987654321;
    options.max_samples = 11;
    options.infra_retries = 5;
    options.verify_revert = true;
    options.jobs = 2;
    options.multisection = true;
    options.build_ahead = false;
    options.build_ahead_always = true;
    options.series = true;
    options.good_config = "base,release";
    options.bad_config = "/x/bad.config";
    options.good_dot_config = "CONFIG_9P_FS=y\n";
    options.bad_dot_config = "# CONFIG_9P_FS is not set\n";
    options.max_builds = 9;
    options.max_boots = 90;
    options.max_hours = 2.25;
    ASSERT_EQ(rig::test::fields_left_default(options), "");
    const std::string text = encode_settings(options);
    EXPECT_EQ(text.front(), '{') << text;
    auto back = decode_settings(text);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(rig::test::fields_differing(*back, options), "") << "confidence exactly too";
}

TEST(BisectSettings, KeyValueLinesOfOlderBisectsRead) {
    auto back = decode_settings("scenario=/x/s.yaml\ncell=cache=mmap\nsamples=4\n"
                                "confidence=0.9\nmax_samples=12\ninfra_retries=2\n"
                                "verify_revert=1\njobs=3\n");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->scenario, "/x/s.yaml");
    EXPECT_EQ(back->cell, "cache=mmap");
    EXPECT_EQ(back->samples, 4);
    EXPECT_DOUBLE_EQ(back->confidence, 0.9);
    EXPECT_EQ(back->max_samples, 12);
    EXPECT_EQ(back->infra_retries, 2);
    EXPECT_TRUE(back->verify_revert);
    EXPECT_EQ(back->jobs, 3);
    EXPECT_FALSE(decode_settings("samples=many\n"));
    EXPECT_FALSE(decode_settings("{\"samples\": \"many\"}"));
}

TEST(BisectSettings, RoundTripAndCellSelection) {
    StartOptions options;
    options.scenario = "/x/s.yaml";
    options.cell = "cache=mmap";
    options.samples = 4;
    options.confidence = 0.9;
    options.verify_revert = true;
    auto back = decode_settings(encode_settings(options));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->scenario, options.scenario);
    EXPECT_EQ(back->cell, "cache=mmap");
    EXPECT_EQ(back->samples, 4);
    EXPECT_DOUBLE_EQ(back->confidence, 0.9);
    EXPECT_TRUE(back->verify_revert);

    std::vector<rig::core::Cell> cells(2);
    cells[0].id = "aaaa11112222";
    cells[0].kernel_name = "linux";
    cells[0].params = {{"fs", "9p"}, {"cache", "loose"}};
    cells[1].id = "aaab33334444";
    cells[1].kernel_name = "linux";
    cells[1].params = {{"fs", "9p"}, {"cache", "mmap"}};
    EXPECT_EQ(*select_cell(cells, "cache=mmap"), 1u);
    EXPECT_EQ(*select_cell(cells, "kernel=linux,cache=loose"), 0u);
    EXPECT_EQ(*select_cell(cells, "aaab"), 1u);
    auto ambiguous = select_cell(cells, "aaa");
    ASSERT_FALSE(ambiguous);
    EXPECT_NE(ambiguous.error().message.find("matches 2 cells"), std::string::npos);
    EXPECT_FALSE(select_cell(cells, "fs=virtiofs"));
    // No --cell: fine for a scenario of one cell, and a list of the choices otherwise.
    EXPECT_EQ(*select_cell({cells[0]}, ""), 0u);
    auto unnamed = select_cell(cells, "");
    ASSERT_FALSE(unnamed);
    EXPECT_NE(unnamed.error().message.find("the scenario has 2 cells: --cell must name"),
              std::string::npos)
        << unnamed.error().message;
    // The candidates are listed by id and label, so that the user can pick one.
    EXPECT_NE(ambiguous.error().message.find("aaab33334444 linux " + cells[1].config +
                                             " cache=mmap fs=9p"),
              std::string::npos)
        << ambiguous.error().message;
}

TEST(BisectBound, CeilLog2PlusTheTwoEndpoints) {
    EXPECT_EQ(rig::bisect::build_bound(0), 2);
    EXPECT_EQ(rig::bisect::build_bound(1), 2);
    EXPECT_EQ(rig::bisect::build_bound(2), 3);
    EXPECT_EQ(rig::bisect::build_bound(5), 5);
    EXPECT_EQ(rig::bisect::build_bound(1024), 12);
    EXPECT_EQ(rig::bisect::build_bound_text(7), "ceil(log2 7) + 2 = 5");
}

TEST(BisectBound, RoundsOfKTakeKBuildsPerPowerOfKPlusOne) {
    // 24 commits in rounds of 3: 24 -> 6 -> 2 -> 1 needs ceil(log4 24) = 3 rounds.
    EXPECT_EQ(rig::bisect::build_bound(24, 3), 11);
    EXPECT_EQ(rig::bisect::build_bound(16, 3), 8);
    EXPECT_EQ(rig::bisect::build_bound(1, 3), 2);
    EXPECT_EQ(rig::bisect::build_bound(24, 1), rig::bisect::build_bound(24));
    EXPECT_EQ(rig::bisect::build_bound_text(24, 3), "3 x ceil(log4 24) + 2 = 11");
}

TEST(BisectVerdict, ComparisonsSwitchToMannWhitneyAtEightSamplesASide) {
    using rig::core::Test;
    EXPECT_EQ(rig::bisect::difference_test(7, 20), Test::welch);
    EXPECT_EQ(rig::bisect::difference_test(20, 7), Test::welch);
    EXPECT_EQ(rig::bisect::difference_test(8, 8), Test::mann_whitney);
}

TEST(BisectStore, BisectsAndStepsRoundTrip) {
    rig::test::TempDir dir;
    auto db = rig::store::Database::open(dir.path() / "rig.db");
    ASSERT_TRUE(db) << db.error().message;
    rig::store::RunInfo run;
    run.scenario_name = "s";
    auto run_id = (*db)->begin_run(run);
    ASSERT_TRUE(run_id);
    rig::store::BisectInfo info;
    info.run_id = *run_id;
    info.cell_id = "aaaa11112222";
    info.good = "g";
    info.bad = "b";
    info.criterion = "errors";
    info.state = "samples=3\n";
    auto id = (*db)->begin_bisect(info);
    ASSERT_TRUE(id) << id.error().message;
    rig::store::BisectStep step;
    step.bisect_id = *id;
    step.role = rig::core::StepRole::bisect;
    step.commit = "c";
    step.cell_id = "cccc";
    step.build_outcome = rig::core::BuildOutcome::ok;
    step.build_seconds = 42.5;
    step.samples = {3, 5, 8};
    step.verdict = Verdict::good;
    step.evidence = "3 clean samples";
    ASSERT_TRUE((*db)->add_bisect_step(step));
    auto steps = (*db)->bisect_steps(*id);
    ASSERT_TRUE(steps);
    ASSERT_EQ(steps->size(), 1u);
    EXPECT_EQ((*steps)[0].samples, (std::vector<int64_t>{3, 5, 8}));
    EXPECT_EQ((*steps)[0].build_seconds, 42.5);
    EXPECT_EQ((*steps)[0].verdict, Verdict::good);
    EXPECT_EQ((*steps)[0].role, rig::core::StepRole::bisect);
    EXPECT_EQ((*steps)[0].build_outcome, rig::core::BuildOutcome::ok);
    auto stored = (*db)->bisect(*id);
    ASSERT_TRUE(stored && *stored);
    EXPECT_EQ((*stored)->status, rig::core::BisectStatus::running);
    EXPECT_EQ((*stored)->run_id, *run_id);
    ASSERT_TRUE((*db)->finish_bisect(*id, rig::core::BisectStatus::culprit, "c", ""));
    EXPECT_EQ((*(*db)->bisect(*id))->culprit, "c");
    EXPECT_EQ((*(*db)->bisect(*id))->status, rig::core::BisectStatus::culprit);
    EXPECT_FALSE((*db)->finish_bisect(99, rig::core::BisectStatus::culprit, "", ""));
    EXPECT_EQ((*db)->bisects()->size(), 1u);
}

// Each part of the cost cap is reached at its limit, and none without one.
TEST(BisectCost, TheCapNamesThePartReached) {
    rig::bisect::StartOptions options;
    rig::bisect::Cost cost{.builds = 6, .build_seconds = 1800, .boots = 40, .guest_seconds = 1800};
    EXPECT_FALSE(rig::bisect::cap_reached(options, cost));
    options.max_builds = 7;
    options.max_boots = 41;
    options.max_hours = 1.01;
    EXPECT_FALSE(rig::bisect::cap_reached(options, cost));
    options.max_hours = 1;
    EXPECT_EQ(rig::bisect::cap_reached(options, cost),
              "1.00 hours of builds and guests of at most 1.00");
    options.max_boots = 40;
    EXPECT_EQ(rig::bisect::cap_reached(options, cost), "40 guest boots of at most 40");
    options.max_builds = 6;
    EXPECT_EQ(rig::bisect::cap_reached(options, cost), "6 kernel builds of at most 6");
}
