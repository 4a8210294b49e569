// SPDX-License-Identifier: MIT
// The run loop end to end in milliseconds: run_scenario with a FakeKernelProvider, a
// FakeHypervisor, a FakeProbe and a FakeClock over a real SQLite file, for rounds,
// outcomes, resume from the stored cells, a kernel that does not build beside one that
// does, a kernel config error, Ctrl-C during a build, --jobs, and the host and start time
// a run records.
#include "fake_clock.hpp"
#include "fake_hypervisor.hpp"
#include "fake_kernel_provider.hpp"
#include "fake_probe.hpp"
#include "run/progress.hpp"
#include "run/runner.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "util/json.hpp"

#include <atomic>
#include <filesystem>
#include <gtest/gtest.h>
#include <set>
#include <sstream>

using namespace rig;
using rig::test::FakeClock;
using rig::test::FakeHypervisor;
using rig::test::FakeKernelProvider;
using rig::test::FakeProbe;
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
    FakeProbe probe;
    FakeClock clock;
    run::RunSettings settings;
    std::atomic<bool> interrupted{false};
    std::ostringstream out;

    Loop() {
        settings.results_dir = dir.path();
        settings.cache_dir = dir.path() / "cache";
        settings.kernels = &kernels;
        settings.pacing.poll = std::chrono::milliseconds(2);
        settings.probe = &probe;
        settings.clock = &clock;
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

// In a log every line says when it was written, from the run's clock.
TEST(RunProgress, ALogGetsLinesStampedWithTheWallTimeInUtc) {
    FakeClock clock;
    std::ostringstream out;
    run::Progress progress(out, false, 2, clock);
    progress.begin_sample(0, "deb-6.1 9p");
    progress.phase("booting");
    clock.advance(std::chrono::seconds(3));
    progress.note("kernel deb-6.1: fetched");
    progress.end_sample("ok", 3);
    EXPECT_EQ(out.str(), "2023-11-14T22:13:20Z [1/2] deb-6.1 9p: booting (0ms; elapsed 0ms, ETA "
                         "?)\n"
                         "2023-11-14T22:13:23Z kernel deb-6.1: fetched\n"
                         "2023-11-14T22:13:23Z [1/2] deb-6.1 9p: ok in 3.0s\n");
    // A terminal's line is redrawn in place, without a stamp.
    std::ostringstream screen;
    run::Progress drawn(screen, true, 1, clock);
    drawn.begin_sample(0, "deb-6.1 9p");
    drawn.phase("booting");
    EXPECT_EQ(screen.str().rfind("\r\033[K[1/1] deb-6.1 9p: booting", 0), 0u) << screen.str();
}

namespace {

// The seconds of the ETA on a batch line: "..., ETA 4m 41s)" or "..., ETA 58.0s)".
double eta_of(const std::string& line) {
    size_t at = line.rfind("ETA ");
    EXPECT_NE(at, std::string::npos) << line;
    std::string text = line.substr(at + 4, line.find(')', at) - at - 4);
    std::erase(text, ' ');
    double seconds = 0;
    if (size_t m = text.find('m'); m != std::string::npos) {
        seconds = 60 * std::stod(text.substr(0, m));
        text = text.substr(m + 1);
    }
    return seconds + (text.empty() ? 0 : std::stod(text));
}

} // namespace

// Two guests at once finish in pairs: each line's ETA is the work left over the slots,
// so it neither counts one guest's time per finished sample at first nor halves when
// the second of the pair ends (seen: 10m24s, then 4m53s).
TEST(RunProgress, TwoGuestsAtOnceKeepTheEtaSteady) {
    FakeClock clock;
    std::ostringstream out;
    run::Progress progress(out, false, 11, clock);
    progress.parallel(2);
    std::vector<double> etas;
    size_t done = 0;
    for (int pair = 0; pair < 5; ++pair) {
        clock.advance(std::chrono::seconds(60));
        progress.finished(60 + pair);
        ++done;
        progress.batch("guests", 11 - done - 1, 1, done);
        clock.advance(std::chrono::seconds(5));
        progress.finished(65);
        ++done;
        progress.batch("guests", 11 - done, 0, done);
    }
    std::istringstream lines(out.str());
    for (std::string line; std::getline(lines, line);)
        etas.push_back(eta_of(line));
    ASSERT_EQ(etas.size(), 10u) << out.str();
    // Nine samples left after the first, ~62 s each, two at a time: about 5 minutes.
    EXPECT_NEAR(etas[0], 10 * 60 / 2, 15) << out.str();
    for (size_t i = 1; i < etas.size(); ++i) {
        EXPECT_LE(etas[i], etas[i - 1] * 1.05) << out.str();
        EXPECT_GE(etas[i], etas[i - 1] * 0.6) << out.str();
    }
}

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

// The same cells on two kernels, for one that does not build beside one that does.
const char* const k_two_kernels = R"(name: loop
kernels:
  - {name: good, debian: linux-image-6.1}
  - {name: broken, debian: linux-image-6.1}
matrix:
  fs: 9p
  cache: [loose, none]
workload: {command: make}
repeat: 2
warmup: 1
guest: {cpus: 1, accel: tcg, count_9p: false}
)";

TEST(RunLoop, AKernelThatDoesNotBuildEndsOnlyItsOwnCellsAsBuildFailed) {
    Loop loop;
    loop.scenario = spec::parse_scenario(k_two_kernels, "loop.yaml").value();
    loop.kernels.set("broken", FakeKernelProvider::Result::build_failed);
    FakeHypervisor hypervisor(test::quick_guest());
    auto summary = loop.run(hypervisor);
    ASSERT_TRUE(summary) << summary.error().message << loop.out.str();
    EXPECT_EQ(summary->samples_run, 8u);
    EXPECT_EQ(summary->samples_not_ok, 4u) << "what makes rig exit 1";
    // Only the good kernel's guests boot: its two warmups and four samples.
    EXPECT_EQ(hypervisor.started().size(), 6u);
    auto cells = loop.db->cells(summary->run_id).value();
    std::map<std::string, std::string> kernel_of;
    for (const core::Cell& cell : cells)
        kernel_of[cell.id] = cell.kernel_name;
    auto samples = loop.samples(summary->run_id);
    ASSERT_EQ(samples.size(), 8u);
    for (const core::Sample& sample : samples) {
        if (kernel_of[sample.cell_id] == "good") {
            EXPECT_EQ(sample.outcome, core::Outcome::ok);
            continue;
        }
        EXPECT_EQ(sample.outcome, core::Outcome::build_failed);
        EXPECT_NE(sample.evidence.find("kernel broken at fake does not build"), std::string::npos)
            << sample.evidence;
        ASSERT_EQ(sample.lines.size(), 2u);
        EXPECT_EQ(sample.lines[0].source, "build");
        EXPECT_EQ(sample.lines[0].line,
                  "fs/9p/vfs_file.c:42:1: error: expected ';' before '}' token");
        EXPECT_EQ(sample.error_count, 2);
    }
    EXPECT_EQ(loop.db->run(summary->run_id).value()->status, core::RunStatus::finished);
    // Each kernel asked for once; a resume finds every cell recorded and builds nothing.
    EXPECT_EQ(loop.kernels.asked().size(), 2u);
    FakeHypervisor second(test::quick_guest());
    auto resumed = loop.run(second, summary->run_id);
    ASSERT_TRUE(resumed) << resumed.error().message;
    EXPECT_EQ(resumed->samples_skipped, 8u);
    EXPECT_EQ(resumed->samples_run, 0u);
    EXPECT_EQ(loop.kernels.asked().size(), 2u);
    EXPECT_TRUE(second.started().empty());
}

TEST(RunLoop, AKernelThatCannotBeConfiguredStopsTheRunAndNamesIt) {
    Loop loop;
    loop.kernels.set("deb", FakeKernelProvider::Result::config_error);
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
    // The first guest runs for a second, so that the other slot takes the next ones
    // however late its thread gets a CPU (one slot did all four once, beside a kernel
    // build, with every guest done in 3 ms).
    std::atomic<int> guests{0};
    FakeHypervisor hypervisor([&guests](const vm::GuestSpec&) {
        if (guests++ > 0)
            return test::quick_guest();
        test::GuestScript slow;
        slow.hello(std::chrono::milliseconds(0))
            .workload(std::chrono::milliseconds(1), std::chrono::milliseconds(1000), 0)
            .done(std::chrono::milliseconds(1000))
            .exit(std::chrono::milliseconds(1001), 0);
        return slow;
    });
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

TEST(RunLoop, TheRunRecordsItsHostProbedOnceAndItsStartFromTheClock) {
    Loop loop;
    loop.probe.answer = core::Accelerator::kvm;
    loop.scenario.guest.accel = core::Accel::auto_detect;
    loop.clock.advance(std::chrono::minutes(90));
    FakeHypervisor hypervisor(test::quick_guest());
    auto summary = loop.run(hypervisor);
    ASSERT_TRUE(summary) << summary.error().message;
    EXPECT_EQ(loop.probe.facts_asked, 1) << "a host probed once per run";
    EXPECT_EQ(loop.probe.accels_asked, 1);
    auto run = loop.db->run(summary->run_id).value();
    // 1'700'000'000 s after the epoch, and the 90 minutes the clock was moved on.
    EXPECT_EQ(run->started_at, "2023-11-14T23:43:20Z");
    auto facts = util::Json::parse(run->host_facts);
    EXPECT_EQ(facts["hostname"], "fake-host");
    EXPECT_EQ(facts["qemu"], "7.2.22");
    EXPECT_EQ(facts["cpus"], 4);
    EXPECT_EQ(facts["accel"], "kvm") << "the probe's choice, recorded";
    for (const auto& sample : loop.samples(summary->run_id))
        EXPECT_EQ(sample.accel, "kvm");
    EXPECT_NE(loop.out.str().find("accel kvm"), std::string::npos) << loop.out.str();
}

TEST(RunLoop, AScenarioThatInsistsOnKvmWhereThereIsNoneBootsNothing) {
    Loop loop;
    loop.scenario.guest.accel = core::Accel::kvm;
    FakeHypervisor hypervisor(test::quick_guest());
    auto summary = loop.run(hypervisor);
    ASSERT_FALSE(summary);
    EXPECT_EQ(summary.error().kind, ErrorKind::infra);
    EXPECT_TRUE(hypervisor.started().empty());
    EXPECT_TRUE(loop.db->runs().value().empty()) << "no run is stored";
}
