// SPDX-License-Identifier: MIT
// Tests of the bisect's measure loop (bisect/step): verdicts from scripted guests of the
// FakeHypervisor, infra errors retried and then stopping the step, an interrupt, and
// every sample stored.
#include "bisect/step.hpp"
#include "fake_hypervisor.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>

using namespace rig;
using rig::core::Verdict;
using rig::test::FakeHypervisor;
using rig::test::GuestScript;
using std::chrono::milliseconds;

namespace {

// A bisect of one cell with its database, ready for one step at commit "c0ffee...".
struct Bench {
    test::TempDir dir;
    std::unique_ptr<store::Database> db;
    bisect::Settings settings;
    bisect::CommitCell target;
    kernel::Artifact kernel;
    bisect::Policy policy;
    std::atomic<bool> interrupted{false};
    std::ostringstream out;
    std::optional<bisect::Context> context;

    explicit Bench(const std::string& criterion = "errors") {
        db = std::move(*store::Database::open(dir.path() / "rig.db"));
        settings.results_dir = dir.path();
        settings.cache_dir = dir.path() / "cache";
        target.scenario.name = "bisect-test";
        target.scenario.workload.kind = core::WorkloadKind::command;
        target.scenario.workload.command = "true";
        target.scenario.guest.count_9p = false;
        target.scenario.guest.accel = core::Accel::tcg;
        target.scenario.timeouts = {milliseconds(10'000), milliseconds(10'000),
                                    milliseconds(10'000)};
        target.scenario.kernels.push_back({});
        target.scenario.kernels.back().name = "linux";
        target.cell.id = "c0ffee000001";
        target.cell.kernel_name = "linux";
        kernel.id = "fake";
        kernel.boot_image = dir.path() / "vmlinux";
        std::ofstream(dir.path() / "base.cpio");

        store::RunInfo run;
        run.scenario_name = target.scenario.name;
        store::BisectInfo info;
        info.run_id = *db->begin_run(run);
        info.cell_id = target.cell.id;
        info.good = "900d";
        info.bad = "bad0";
        info.criterion = criterion;
        info.id = *db->begin_bisect(info);
        EXPECT_TRUE(db->add_cells(info.run_id, {target.cell}));
        bisect::StartOptions options;
        options.infra_retries = 1;
        context.emplace(bisect::Context{*db,
                                        settings,
                                        info,
                                        options,
                                        *bisect::parse_criterion(criterion),
                                        target.scenario,
                                        target.cell,
                                        dir.path(),
                                        dir.path(),
                                        nullptr,
                                        {},
                                        {},
                                        nullptr,
                                        {}});
        policy.kind = bisect::Policy::Kind::functional;
        policy.samples = 2; // clean samples for a good verdict
        policy.budget = 4;
    }

    // The loop of one step at c0ffee0000000000 on `hypervisor`.
    bisect::Measured measure(vm::Hypervisor& hypervisor, std::optional<Verdict>* verdict) {
        bisect::Measured measured;
        measured.step.cell_id = target.cell.id;
        bisect::StepRequest request{core::StepRole::bisect, "c0ffee0000000000", policy};
        bisect::StepIo io{hypervisor, interrupted, out};
        bisect::Boot boot{target, kernel, dir.path() / "base.cpio", "step: "};
        std::vector<bisect::Measuring> steps{{request, boot, measured}};
        auto done = bisect::sample_until_decided(*context, io, steps);
        EXPECT_TRUE(done) << done.error().message;
        *verdict = steps.front().decision.verdict;
        return measured;
    }
};

GuestScript failed_start() {
    GuestScript script;
    script.start_error = "cannot set up guest memory";
    return script;
}

} // namespace

TEST(BisectMeasure, CleanSamplesUpToThePolicyGiveGood) {
    Bench bench;
    FakeHypervisor hypervisor(test::finished_guest(0));
    std::optional<Verdict> verdict;
    bisect::Measured measured = bench.measure(hypervisor, &verdict);
    EXPECT_EQ(verdict, Verdict::good);
    EXPECT_EQ(hypervisor.started().size(), 2u);
    ASSERT_EQ(measured.samples.size(), 2u);
    EXPECT_EQ(measured.step.samples.size(), 2u);
    EXPECT_NE(measured.step.samples[0], measured.step.samples[1]);
    EXPECT_EQ(measured.samples[1].repetition, 1);
    EXPECT_EQ(bench.context->samples_by_cell[bench.target.cell.id].size(), 2u);
    auto stored = bench.db->samples(bench.context->info.run_id);
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->size(), 2u);
    EXPECT_NE(bench.out.str().find("step: sample 2: clean"), std::string::npos) << bench.out.str();
}

TEST(BisectMeasure, OneReproducingSampleGivesBadAtOnce) {
    Bench bench;
    FakeHypervisor hypervisor(test::finished_guest(1));
    std::optional<Verdict> verdict;
    bisect::Measured measured = bench.measure(hypervisor, &verdict);
    EXPECT_EQ(verdict, Verdict::bad);
    EXPECT_EQ(measured.samples.size(), 1u);
}

TEST(BisectMeasure, AGuestThatNeverStartsItsWorkloadIsSkipped) {
    Bench bench;
    bench.target.scenario.timeouts.boot = milliseconds(30);
    GuestScript hangs;
    hangs.hello(milliseconds(0));
    for (milliseconds at{5}; at < milliseconds(300); at += milliseconds(5))
        hangs.console(at, "<6>waiting");
    FakeHypervisor hypervisor(hangs);
    std::optional<Verdict> verdict;
    bisect::Measured measured = bench.measure(hypervisor, &verdict);
    EXPECT_EQ(verdict, Verdict::skip);
    ASSERT_EQ(measured.samples.size(), 1u);
    EXPECT_EQ(measured.samples[0].outcome, core::Outcome::boot_timeout);
}

TEST(BisectMeasure, InfraErrorsAreRetriedThenStopTheStep) {
    Bench bench; // infra_retries 1: the second in a row stops
    FakeHypervisor hypervisor(failed_start());
    std::optional<Verdict> verdict;
    bisect::Measured measured = bench.measure(hypervisor, &verdict);
    EXPECT_FALSE(verdict);
    EXPECT_EQ(hypervisor.started().size(), 2u);
    ASSERT_TRUE(measured.stopped);
    EXPECT_EQ(*measured.stopped, "2 infra errors in a row at c0ffee000000: infra-error: cannot "
                                 "set up guest memory")
        << *measured.stopped;
    EXPECT_EQ(measured.samples.size(), 2u); // stored: they are the stop's evidence
}

TEST(BisectMeasure, AnInfraErrorBetweenCleanSamplesIsNotCounted) {
    Bench bench;
    int boots = 0;
    FakeHypervisor hypervisor([&boots](const vm::GuestSpec&) {
        return ++boots == 2 ? failed_start() : test::finished_guest(0);
    });
    std::optional<Verdict> verdict;
    bisect::Measured measured = bench.measure(hypervisor, &verdict);
    EXPECT_EQ(verdict, Verdict::good);
    EXPECT_FALSE(measured.stopped);
    ASSERT_EQ(measured.samples.size(), 3u);
    EXPECT_EQ(measured.samples[1].outcome, core::Outcome::infra_error);
}

TEST(BisectMeasure, AnInterruptEndsTheLoopWithoutAVerdict) {
    Bench bench;
    bench.interrupted = true;
    FakeHypervisor hypervisor(test::finished_guest(0));
    std::optional<Verdict> verdict;
    bisect::Measured measured = bench.measure(hypervisor, &verdict);
    EXPECT_FALSE(verdict);
    EXPECT_TRUE(measured.interrupted);
    EXPECT_TRUE(hypervisor.started().empty());
}

TEST(BisectMeasure, FixedEndpointSamplesCalibrateADuration) {
    Bench bench("duration");
    bench.policy.kind = bisect::Policy::Kind::fixed;
    bench.policy.samples = 3;
    bench.policy.calibrates = Verdict::bad;
    FakeHypervisor hypervisor(test::finished_guest(0));
    std::optional<Verdict> verdict;
    bisect::Measured measured = bench.measure(hypervisor, &verdict);
    EXPECT_EQ(verdict, Verdict::bad);
    ASSERT_EQ(measured.samples.size(), 3u);
    for (const core::Sample& sample : measured.samples)
        EXPECT_DOUBLE_EQ(sample.guest_seconds, 0.02); // the script's 10 to 30 ms
}

TEST(BisectMeasure, WithCpuSetsAStepsSamplesRunAtOnceOneGuestPerSet) {
    Bench bench("duration");
    bench.policy.kind = bisect::Policy::Kind::fixed;
    bench.policy.samples = 3;
    bench.policy.calibrates = Verdict::bad;
    bench.context->cpu_sets = {{0}, {1}};
    FakeHypervisor hypervisor(test::finished_guest(0));
    std::optional<Verdict> verdict;
    bisect::Measured measured = bench.measure(hypervisor, &verdict);
    EXPECT_EQ(verdict, Verdict::bad);
    // Three samples, no more: two at once, then one; each guest pinned, recorded per sample.
    ASSERT_EQ(hypervisor.started().size(), 3u);
    ASSERT_EQ(measured.samples.size(), 3u);
    std::multiset<std::string> cpus;
    for (const core::Sample& sample : measured.samples)
        cpus.insert(sample.cpus);
    EXPECT_EQ(cpus, (std::multiset<std::string>{"0", "1", "1"}));
    for (const vm::GuestSpec& spec : hypervisor.started())
        EXPECT_EQ(spec.host_cpus.size(), 1u);
    EXPECT_NE(bench.out.str().find("cpus 1)"), std::string::npos) << bench.out.str();
}

TEST(BisectMeasure, StepsMeasuredTogetherInterleaveOverTheSameCpuSets) {
    Bench bench("duration");
    bench.policy.kind = bisect::Policy::Kind::fixed;
    bench.policy.samples = 4;
    bench.context->cpu_sets = {{0}, {1}};
    bisect::CommitCell other = bench.target;
    other.cell.id = "900d00000001";
    ASSERT_TRUE(bench.db->add_cells(bench.context->info.run_id, {other.cell}));
    FakeHypervisor hypervisor(test::finished_guest(0));
    bisect::Policy good_policy = bench.policy;
    bench.policy.calibrates = Verdict::bad;
    good_policy.calibrates = Verdict::good;
    bisect::StepRequest bad{core::StepRole::bad_endpoint, "bad0", bench.policy};
    bisect::StepRequest good{core::StepRole::good_endpoint, "900d", good_policy};
    bisect::StepIo io{hypervisor, bench.interrupted, bench.out};
    bisect::Boot bad_boot{bench.target, bench.kernel, bench.dir.path() / "base.cpio", "bad: "};
    bisect::Boot good_boot{other, bench.kernel, bench.dir.path() / "base.cpio", "good: "};
    bisect::Measured bad_measured, good_measured;
    bad_measured.step.cell_id = bench.target.cell.id;
    good_measured.step.cell_id = other.cell.id;
    std::vector<bisect::Measuring> steps{{bad, bad_boot, bad_measured},
                                         {good, good_boot, good_measured}};
    ASSERT_TRUE(bisect::sample_until_decided(*bench.context, io, steps));
    EXPECT_EQ(steps[0].decision.verdict, Verdict::bad);
    EXPECT_EQ(steps[1].decision.verdict, Verdict::good);
    // Each endpoint ran twice on each set, and the guests alternated between them.
    for (const bisect::Measured* measured : {&bad_measured, &good_measured}) {
        std::multiset<std::string> cpus;
        for (const core::Sample& sample : measured->samples)
            cpus.insert(sample.cpus);
        EXPECT_EQ(cpus, (std::multiset<std::string>{"0", "0", "1", "1"}));
    }
    ASSERT_EQ(hypervisor.started().size(), 8u);
    std::string order = bench.out.str();
    EXPECT_LT(order.find("bad: sample 1"), order.find("good: sample 2")) << order;
    EXPECT_LT(order.find("good: sample 1"), order.find("bad: sample 2")) << order;
}
