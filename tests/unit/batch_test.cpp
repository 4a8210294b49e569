// SPDX-License-Identifier: MIT
// The batch coordinator in milliseconds: run_scenario on backend slurm with a FakeCluster,
// a FakeKernelProvider and a FakeClock over a real SQLite file, polling every 2 s of
// virtual time. Tasks submitted as one array, a task the scheduler ended retried, infra
// past the bound stored as such, Ctrl-C and resume, the polls' pace and the ETA, and tasks
// that outlive scancel.
#include "fake_clock.hpp"
#include "fake_cluster.hpp"
#include "fake_kernel_provider.hpp"
#include "fake_probe.hpp"
#include "run/runner.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>
#include <sstream>

using namespace rig;
using rig::test::FakeClock;
using rig::test::FakeCluster;
using rig::test::FakeKernelProvider;
using rig::test::FakeProbe;

namespace {

const char* const k_scenario = R"(name: batch
kernels:
  - {name: deb, debian: linux-image-6.1}
matrix:
  fs: 9p
  cache: [loose, none]
workload: {command: make}
repeat: 2
backend: slurm
guest: {cpus: 1, accel: tcg, count_9p: false}
)";

struct Batch {
    test::TempDir dir;
    core::Scenario scenario = spec::parse_scenario(k_scenario, "batch.yaml").value();
    std::unique_ptr<store::Database> db =
        std::move(store::Database::open(dir.path() / "rig.db").value());
    FakeKernelProvider kernels{dir.path() / "kernels"};
    FakeProbe probe;
    FakeClock clock;
    run::RunSettings settings;
    std::atomic<bool> interrupted{false};
    std::ostringstream out;

    explicit Batch(FakeCluster& cluster) {
        settings.results_dir = dir.path();
        settings.cache_dir = dir.path() / "cache";
        settings.kernels = &kernels;
        settings.batch = true;
        settings.program = "/usr/bin/rig";
        settings.db = dir.path() / "rig.db";
        settings.cluster = &cluster;
        // The real pace, on the fake clock: polls take no time.
        settings.batch_poll = std::chrono::seconds(2);
        settings.probe = &probe;
        settings.clock = &clock;
    }

    Expected<run::RunSummary> run(int64_t run_id = 0) {
        return run::run_scenario(scenario, *db, std::vector<run::Host>{}, settings, run_id,
                                 interrupted, out);
    }

    size_t samples_stored(int64_t run_id) { return db->samples(run_id).value().size(); }

    std::map<std::string, int> outcomes(int64_t run_id) {
        std::map<std::string, int> counts;
        auto samples = db->samples(run_id).value();
        for (const auto& sample : samples)
            ++counts[std::string(core::to_string(sample.outcome))];
        return counts;
    }
};

FakeCluster::Ending ok() {
    return {};
}

} // namespace

TEST(Batch, EverySampleIsATaskOfOneArrayAndIsStoredOnce) {
    FakeCluster cluster([](const run::SampleJob&) { return ok(); });
    Batch batch(cluster);
    auto summary = batch.run();
    ASSERT_TRUE(summary) << summary.error().message << batch.out.str();
    EXPECT_EQ(summary->samples_run, 4u);
    EXPECT_EQ(cluster.submitted, 1);
    EXPECT_EQ(cluster.ran.size(), 4u);
    EXPECT_EQ(batch.outcomes(summary->run_id), (std::map<std::string, int>{{"ok", 4}}));
}

TEST(Batch, ATaskTheSchedulerEndedIsRetriedAndIsNeverAResult) {
    FakeCluster cluster([](const run::SampleJob& job) {
        if (job.repetition == 0 && job.cell.cell.param("cache") == "loose" && job.attempt == 0)
            return FakeCluster::Ending{sched::JobState::node_fail, std::nullopt};
        return ok();
    });
    Batch batch(cluster);
    auto summary = batch.run();
    ASSERT_TRUE(summary) << summary.error().message << batch.out.str();
    EXPECT_EQ(batch.outcomes(summary->run_id), (std::map<std::string, int>{{"ok", 4}}));
    EXPECT_EQ(cluster.ran.size(), 5u) << "the node failure's task ran again";
    EXPECT_EQ(cluster.submitted, 2);
}

TEST(Batch, InfraPastTheRetryBoundIsStoredAsInfra) {
    FakeCluster cluster([](const run::SampleJob& job) {
        if (job.repetition == 1 && job.cell.cell.param("cache") == "none")
            return FakeCluster::Ending{sched::JobState::failed, core::Outcome::infra_error};
        return ok();
    });
    Batch batch(cluster);
    auto summary = batch.run();
    ASSERT_TRUE(summary) << summary.error().message << batch.out.str();
    EXPECT_EQ(batch.outcomes(summary->run_id),
              (std::map<std::string, int>{{"ok", 3}, {"infra-error", 1}}));
    EXPECT_EQ(cluster.ran.size(), 3u + 4u) << "a first attempt and three retries";
    EXPECT_EQ(summary->samples_not_ok, 1u);
}

TEST(Batch, CtrlCCancelsTheTasksAndAResumeRunsOnlyWhatIsMissing) {
    Batch* current = nullptr;
    int ran = 0;
    FakeCluster cluster([&](const run::SampleJob&) {
        if (++ran == 2)
            current->interrupted = true;
        return ok();
    });
    Batch batch(cluster);
    current = &batch;
    auto first = batch.run();
    ASSERT_TRUE(first) << first.error().message << batch.out.str();
    EXPECT_TRUE(first->interrupted);
    EXPECT_GE(cluster.cancels, 1);
    size_t stored = batch.db->samples(first->run_id).value().size();
    EXPECT_LT(stored, 4u);

    batch.interrupted = false;
    auto resumed = batch.run(first->run_id);
    ASSERT_TRUE(resumed) << resumed.error().message << batch.out.str();
    EXPECT_EQ(resumed->samples_skipped, stored);
    EXPECT_EQ(batch.outcomes(first->run_id), (std::map<std::string, int>{{"ok", 4}}));
}

TEST(Batch, TheClusterIsPolledEveryIntervalAndTheEtaFollowsTheClock) {
    FakeCluster cluster([](const run::SampleJob&) { return ok(); });
    Batch batch(cluster);
    auto summary = batch.run();
    ASSERT_TRUE(summary) << summary.error().message << batch.out.str();
    // Adopting looks once without waiting; every later look comes 2 s after the last.
    EXPECT_EQ(batch.clock.elapsed(), std::chrono::seconds(2) * (cluster.polls - 1));
    EXPECT_EQ(batch.clock.slept(), batch.clock.elapsed()) << "only the polls took time";
    // Submitted, pending, running, then a task ends per poll: 6 polls, 12 s. With one of
    // four done after 6 s the other three take 18 s more.
    EXPECT_EQ(cluster.polls, 7);
    const std::string out = batch.out.str();
    EXPECT_NE(out.find("running 3, done 1/4 (elapsed 6.0s, ETA 18.0s)"), std::string::npos) << out;
    EXPECT_NE(out.find("done 4/4 (elapsed 12.0s, ETA 0ms)"), std::string::npos) << out;
    EXPECT_EQ(batch.samples_stored(summary->run_id), 4u);
}

TEST(Batch, TasksThatOutliveScancelEndTheRunAfterTheWait) {
    Batch* current = nullptr;
    FakeCluster cluster([&](const run::SampleJob&) {
        current->interrupted = true;
        return ok();
    });
    cluster.ignores_cancel = true;
    Batch batch(cluster);
    current = &batch;
    auto summary = batch.run();
    ASSERT_FALSE(summary);
    EXPECT_EQ(summary.error().kind, ErrorKind::infra);
    EXPECT_NE(summary.error().message.find("did not end within 90 s of scancel"), std::string::npos)
        << summary.error().message;
    // Ninety seconds of the fake clock, looked at every half second, and none of real time.
    EXPECT_GE(batch.clock.elapsed(), std::chrono::seconds(90));
    EXPECT_LT(batch.clock.elapsed(), std::chrono::seconds(100));
}

TEST(Batch, AKernelThatDoesNotBuildIsStoredAsBuildFailedAndNeverSubmitted) {
    FakeCluster cluster([](const run::SampleJob&) { return ok(); });
    Batch batch(cluster);
    batch.kernels.set("deb", FakeKernelProvider::Result::build_failed);
    auto summary = batch.run();
    ASSERT_TRUE(summary) << summary.error().message << batch.out.str();
    EXPECT_EQ(batch.outcomes(summary->run_id), (std::map<std::string, int>{{"build-failed", 4}}));
    EXPECT_EQ(summary->samples_not_ok, 4u);
    EXPECT_EQ(cluster.submitted, 0);
    EXPECT_EQ(batch.db->run(summary->run_id).value()->status, core::RunStatus::finished);
}

TEST(Batch, ATimeLimitIsTheSamplesResultAndOutOfMemoryIsInfraNeitherIsRetried) {
    FakeCluster cluster([](const run::SampleJob& job) {
        bool loose = job.cell.cell.param("cache") == "loose";
        // The worker's record of a SIGTERM before the time limit's kill is an aborted one.
        if (loose && job.repetition == 0)
            return FakeCluster::Ending{sched::JobState::timeout, core::Outcome::aborted};
        if (!loose && job.repetition == 1)
            return FakeCluster::Ending{sched::JobState::out_of_memory, std::nullopt};
        return ok();
    });
    Batch batch(cluster);
    batch.scenario.slurm.time_limit = std::chrono::minutes(1);
    auto summary = batch.run();
    ASSERT_TRUE(summary) << summary.error().message << batch.out.str();
    EXPECT_EQ(batch.outcomes(summary->run_id),
              (std::map<std::string, int>{{"ok", 2}, {"time-limit", 1}, {"infra-error", 1}}));
    EXPECT_EQ(cluster.ran.size(), 4u) << "neither is retried";
    EXPECT_EQ(cluster.submitted, 1);
    EXPECT_EQ(summary->samples_not_ok, 2u);
    std::vector<core::Sample> samples = batch.db->samples(summary->run_id).value();
    for (const core::Sample& sample : samples) {
        std::string expected;
        if (sample.outcome == core::Outcome::time_limit)
            expected = "ended TIMEOUT: the sample ran past the job's time limit (slurm.time 1 min)";
        if (sample.outcome == core::Outcome::infra_error)
            expected = "ended OUT_OF_MEMORY: the node's OOM killer ended it";
        EXPECT_NE(sample.evidence.find(expected), std::string::npos) << sample.evidence;
    }
}

TEST(Batch, ANodeFailureOrAPreemptionIsRetriedUpToTheBoundThenStoredAsInfra) {
    FakeCluster cluster([](const run::SampleJob& job) {
        bool loose = job.cell.cell.param("cache") == "loose";
        // One node failure, then the retry runs; a preemption every time.
        if (loose && job.repetition == 1 && job.attempt == 0)
            return FakeCluster::Ending{sched::JobState::node_fail, std::nullopt};
        if (!loose && job.repetition == 0)
            return FakeCluster::Ending{sched::JobState::preempted, std::nullopt};
        return ok();
    });
    Batch batch(cluster);
    auto summary = batch.run();
    ASSERT_TRUE(summary) << summary.error().message << batch.out.str();
    EXPECT_EQ(batch.outcomes(summary->run_id),
              (std::map<std::string, int>{{"ok", 3}, {"infra-error", 1}}));
    EXPECT_EQ(cluster.ran.size(), 4u + 1u + 3u) << "one retry, and three of the preempted";
    std::vector<core::Sample> samples = batch.db->samples(summary->run_id).value();
    for (const core::Sample& sample : samples) {
        if (sample.outcome == core::Outcome::infra_error) {
            EXPECT_NE(sample.evidence.find("ended PREEMPTED after 4 attempts"), std::string::npos)
                << sample.evidence;
        }
    }
}
