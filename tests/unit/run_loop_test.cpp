// SPDX-License-Identifier: MIT
// The run loop end to end in milliseconds: run_scenario with a FakeKernelProvider and a
// FakeHypervisor over a real SQLite file, for rounds, outcomes, resume from the stored
// cells, a kernel that does not build, Ctrl-C during a build and --jobs.
#include "fake_hypervisor.hpp"
#include "fake_kernel_provider.hpp"
#include "run/runner.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <set>
#include <sstream>

using namespace rig;
using rig::test::FakeHypervisor;
using rig::test::FakeKernelProvider;
using rig::test::GuestScript;

namespace {

// Two cells of one Debian kernel, two repetitions after one warmup round; guests without
// 9p counting (a fake guest writes no trace) under TCG (no KVM probe boots).
const char* const k_scenario = R"(name: loop
kernels:
  - {name: deb, debian: linux-image-6.1}
matrix:
  fs: 9p
  cache: [loose, none]
workload: {command: make}
repeat: 2
warmup: 1
guest: {cpus: 1, accel: tcg, count_9p: false}
)";

struct Loop {
    test::TempDir dir;
    core::Scenario scenario = spec::parse_scenario(k_scenario, "loop.yaml").value();
    std::unique_ptr<store::Database> db =
        std::move(store::Database::open(dir.path() / "rig.db").value());
    FakeKernelProvider kernels{dir.path() / "kernels"};
    run::RunSettings settings;
    std::atomic<bool> interrupted{false};
    std::ostringstream out;

    Loop() {
        settings.results_dir = dir.path();
        settings.cache_dir = dir.path() / "cache";
        settings.kernels = &kernels;
        settings.pacing.poll = std::chrono::milliseconds(2);
    }

    Expected<run::RunSummary> run(vm::Hypervisor& hypervisor, int64_t run_id = 0) {
        return run::run_scenario(scenario, *db, hypervisor, settings, run_id, interrupted, out);
    }

    std::vector<core::Sample> samples(int64_t run_id) { return db->samples(run_id).value(); }
};

std::map<std::string, int> count_by_outcome(const std::vector<core::Sample>& samples) {
    std::map<std::string, int> counts;
    for (const auto& sample : samples)
        ++counts[std::string(core::to_string(sample.outcome))];
    return counts;
}

} // namespace

TEST(RunLoop, WarmupsThenRoundsOfEveryCellEachStoredOnce) {
    Loop loop;
    FakeHypervisor hypervisor(test::quick_guest());
    auto summary = loop.run(hypervisor);
    ASSERT_TRUE(summary) << summary.error().message;
    EXPECT_EQ(summary->samples_run, 4u);
    EXPECT_EQ(summary->samples_not_ok, 0u);
    EXPECT_FALSE(summary->interrupted);
    // Two warmups (not stored), then round by round: a, b, a, b.
    ASSERT_EQ(hypervisor.started().size(), 6u);
    auto samples = loop.samples(summary->run_id);
    ASSERT_EQ(samples.size(), 4u);
    EXPECT_EQ(count_by_outcome(samples), (std::map<std::string, int>{{"ok", 4}}));
    EXPECT_EQ(samples[0].cell_id, samples[2].cell_id);
    EXPECT_NE(samples[0].cell_id, samples[1].cell_id);
    EXPECT_EQ(samples[0].accel, "tcg");
    // One kernel, prepared once for all its cells.
    EXPECT_EQ(loop.kernels.asked(), std::vector<std::string>{"deb@ []"});
    EXPECT_EQ(loop.db->run(summary->run_id).value()->status, core::RunStatus::finished);
}

// Each database's run 1 keeps its samples in a folder of its own: runs/ for rig.db, as it
// always was, FILE.runs/ for another database FILE in the same folder.
TEST(RunLoop, TwoDatabasesInOneFolderNeverShareARunsFolder) {
    Loop loop;
    loop.scenario.warmup = 0;
    loop.scenario.repeat = 1;
    FakeHypervisor hypervisor(test::quick_guest());
    loop.settings.db = loop.dir.path() / "rig.db";
    auto first = loop.run(hypervisor);
    ASSERT_TRUE(first) << first.error().message;

    auto other = store::Database::open(loop.dir.path() / "fast.db");
    ASSERT_TRUE(other) << other.error().message;
    run::RunSettings settings = loop.settings;
    settings.db = loop.dir.path() / "fast.db";
    auto second = run::run_scenario(loop.scenario, **other, hypervisor, settings, 0,
                                    loop.interrupted, loop.out);
    ASSERT_TRUE(second) << second.error().message;
    ASSERT_EQ(first->run_id, 1);
    ASSERT_EQ(second->run_id, 1);

    auto cells_in = [](const std::filesystem::path& run_dir) {
        std::set<std::string> names;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(run_dir, ec))
            names.insert(entry.path().filename().string());
        return names;
    };
    std::set<std::string> cells;
    for (const auto& sample : loop.samples(1))
        cells.insert(sample.cell_id);
    ASSERT_EQ(cells.size(), 2u);
    for (const std::string& cell : cells) {
        EXPECT_TRUE(cells_in(loop.dir.path() / "runs" / "1").count(cell)) << cell;
        EXPECT_TRUE(cells_in(loop.dir.path() / "fast.db.runs" / "1").count(cell)) << cell;
    }
}

TEST(RunLoop, EachOutcomeIsStoredAndCountedAsNotOk) {
    Loop loop;
    loop.scenario.warmup = 0;
    loop.scenario.repeat = 1;
    int guest = 0;
    // A failing workload, then a guest that never starts one (the silence timeout is long,
    // so the boot timeout ends it).
    loop.scenario.timeouts.boot = std::chrono::milliseconds(200);
    FakeHypervisor hypervisor([&](const vm::GuestSpec&) {
        return guest++ == 0 ? test::quick_guest(2)
                            : GuestScript().hello(std::chrono::milliseconds(0));
    });
    auto summary = loop.run(hypervisor);
    ASSERT_TRUE(summary) << summary.error().message;
    EXPECT_EQ(summary->samples_run, 2u);
    EXPECT_EQ(summary->samples_not_ok, 2u);
    auto samples = loop.samples(summary->run_id);
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].outcome, core::Outcome::workload_failed);
    EXPECT_EQ(samples[1].outcome, core::Outcome::boot_timeout);
}

TEST(RunLoop, AResumeRunsWhatIsMissingFromTheStoredCellsNotFromTheFile) {
    Loop loop;
    loop.scenario.warmup = 0;
    int started = 0;
    // Ctrl-C while the third sample runs: it is stored as aborted, to be redone.
    FakeHypervisor hypervisor([&](const vm::GuestSpec&) {
        if (++started == 3)
            loop.interrupted = true;
        return test::quick_guest();
    });
    auto first = loop.run(hypervisor);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_TRUE(first->interrupted);
    EXPECT_EQ(loop.db->run(first->run_id).value()->status, core::RunStatus::interrupted);
    auto stored = count_by_outcome(loop.samples(first->run_id));
    EXPECT_EQ(stored["ok"], 2);

    // The file changed since: another kernel, another matrix. The run goes on as stored.
    loop.interrupted = false;
    loop.scenario.kernels[0].name = "renamed";
    loop.scenario.matrix.clear();
    FakeHypervisor second(test::quick_guest());
    auto resumed = loop.run(second, first->run_id);
    ASSERT_TRUE(resumed) << resumed.error().message;
    EXPECT_EQ(resumed->samples_skipped, 2u);
    EXPECT_EQ(second.started().size(), 2u) << "only the aborted and the missing sample";
    auto samples = loop.samples(first->run_id);
    ASSERT_EQ(samples.size(), 4u);
    EXPECT_EQ(count_by_outcome(samples), (std::map<std::string, int>{{"ok", 4}}));
    EXPECT_EQ(loop.kernels.asked().back(), "deb@ []") << "the stored kernel, not the file's";
}

TEST(RunLoop, AKernelThatDoesNotBuildStopsTheRunAndNamesIt) {
    Loop loop;
    loop.kernels.set("deb", FakeKernelProvider::Result::build_failed);
    FakeHypervisor hypervisor(test::quick_guest());
    auto summary = loop.run(hypervisor);
    ASSERT_FALSE(summary);
    EXPECT_EQ(summary.error().kind, ErrorKind::config);
    EXPECT_NE(summary.error().message.find("kernel deb"), std::string::npos);
    EXPECT_TRUE(hypervisor.started().empty());
}

TEST(RunLoop, CtrlCDuringAKernelBuildEndsTheRunAsInterrupted) {
    Loop loop;
    loop.kernels.set("deb", FakeKernelProvider::Result::interrupted);
    loop.kernels.interrupt_after("deb", loop.interrupted);
    FakeHypervisor hypervisor(test::quick_guest());
    auto summary = loop.run(hypervisor);
    ASSERT_TRUE(summary) << summary.error().message;
    EXPECT_TRUE(summary->interrupted);
    EXPECT_EQ(summary->samples_run, 0u);
    EXPECT_TRUE(hypervisor.started().empty());
    EXPECT_EQ(loop.db->run(summary->run_id).value()->status, core::RunStatus::interrupted);
}

TEST(RunLoop, TwoJobsRunEachGuestOnCpusOfItsOwn) {
    Loop loop;
    loop.scenario.warmup = 0;
    loop.settings.jobs = 2;
    FakeHypervisor hypervisor(test::quick_guest());
    auto summary = loop.run(hypervisor);
    ASSERT_TRUE(summary) << summary.error().message;
    EXPECT_EQ(summary->samples_run, 4u);
    std::set<std::string> cpus;
    for (const auto& sample : loop.samples(summary->run_id))
        cpus.insert(sample.cpus);
    EXPECT_EQ(cpus.size(), 2u) << "each CPU set ran samples";
    for (const vm::GuestSpec& spec : hypervisor.started())
        EXPECT_EQ(spec.host_cpus.size(), 1u);
}
