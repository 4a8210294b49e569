// SPDX-License-Identifier: MIT
// The whole bisect driver in milliseconds: create_bisect and run_bisect over a SQLite file,
// with a FakeCommitBuilder, a FakeProbe, a FakeClock and a FakeHypervisor whose guests fail
// from the planted commit on; the history is a FakeGitHistory, or for the first test a real
// git repository, so that git's own bisect stays covered with the driver. Endpoints, steps, skips,
// verification (and the revert's), resume, each status a bisect can end with, and what it
// asks of the host.
#include "bisect/bisect.hpp"
#include "fake_clock.hpp"
#include "fake_commit_builder.hpp"
#include "fake_git_history.hpp"
#include "fake_hypervisor.hpp"
#include "fake_probe.hpp"
#include "git_run.hpp"
#include "guest/job.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>

using namespace rig;
using rig::test::FakeClock;
using rig::test::FakeCommitBuilder;
using rig::test::FakeGitHistory;
using rig::test::FakeHypervisor;
using rig::test::FakeProbe;
using rig::test::GuestScript;

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// Where the history lives: in memory, or in a git repository of the test's.
enum class Git { fake, real };

// A linear history of `size` commits, oldest first, and a scenario of one cell on it.
struct Driver {
    test::TempDir dir;
    fs::path repo = dir.path() / "linux";
    fs::path scenario = dir.path() / "hunt.yaml";
    std::vector<std::string> commits;
    std::unique_ptr<store::Database> db =
        std::move(store::Database::open(dir.path() / "rig.db").value());
    FakeCommitBuilder builder{dir.path() / "kernels"};
    std::unique_ptr<FakeGitHistory> history; // Git::fake
    FakeProbe probe;
    FakeClock clock;
    bisect::Settings settings;
    std::atomic<bool> interrupted{false};
    std::ostringstream out;

    explicit Driver(int size, Git git = Git::fake) {
        fs::create_directories(repo);
        if (git == Git::real) {
            make_repository(size);
        } else {
            history = std::make_unique<FakeGitHistory>(size);
            commits = history->commits();
            settings.history = history->opener();
        }
        std::ofstream(scenario) << "name: hunt\n"
                                   "kernels:\n"
                                   "  - {name: linux, git: linux, ref: master, config: [base]}\n"
                                   "matrix: {fs: 9p, cache: loose}\n"
                                   "workload: {command: make}\n"
                                   "guest: {cpus: 1, accel: tcg, count_9p: false}\n";
        settings.results_dir = dir.path() / "results";
        settings.cache_dir = dir.path() / "cache";
        settings.builder = &builder;
        settings.pacing.poll = milliseconds(2);
        settings.probe = &probe;
        settings.clock = &clock;
    }

    void make_repository(int size) {
        test::git(repo, {"init", "-q", "-b", "master"});
        for (int i = 0; i < size; ++i) {
            std::ofstream(repo / "Makefile") << "# " << i << "\nall:\n";
            test::git(repo, {"add", "Makefile"});
            test::git(repo, {"commit", "-q", "-m", "commit " + std::to_string(i)});
            commits.push_back(test::git(repo, {"rev-parse", "HEAD"}));
        }
    }

    bisect::StartOptions options(int good, int bad) const {
        bisect::StartOptions options;
        options.scenario = scenario;
        options.good = commits.at(good);
        options.bad = commits.at(bad);
        options.criterion = "errors";
        options.samples = 2;
        return options;
    }

    // A bisect of the whole history in rounds of `jobs` commits (--multisection).
    Expected<int64_t> create_multisection(int jobs) {
        bisect::StartOptions start = options(0, static_cast<int>(commits.size()) - 1);
        start.jobs = jobs;
        start.multisection = true;
        return bisect::create_bisect(start, *db, settings);
    }

    // Guests fail their workload from commit `first_bad` on, and succeed before it.
    std::function<GuestScript(const vm::GuestSpec&)> failing_from(int first_bad) {
        std::set<std::string> bad(commits.begin() + first_bad, commits.end());
        return [bad](const vm::GuestSpec& spec) {
            return test::quick_guest(bad.count(FakeCommitBuilder::commit_of(spec.kernel)) ? 1 : 0);
        };
    }

    // Guests of `lasting` that count guest.count 100 from commit `first_bad` on and 10
    // before it; with `fail`, those from `first_bad` on fail their workload too. The fake
    // builds report a millisecond (their build_cost): 20 ms guests outlast two of them.
    std::function<GuestScript(const vm::GuestSpec&)>
    counting_from(int first_bad, bool fail = false, milliseconds lasting = milliseconds(20)) {
        std::set<std::string> bad(commits.begin() + first_bad, commits.end());
        return [bad, fail, lasting](const vm::GuestSpec& spec) {
            const bool regressed = bad.count(FakeCommitBuilder::commit_of(spec.kernel)) > 0;
            GuestScript script;
            script.hello(milliseconds(0))
                .workload(milliseconds(1), lasting, fail && regressed ? 1 : 0)
                .channel(lasting, std::string("metric guest.count ") + (regressed ? "100" : "10") +
                                      " requests")
                .done(lasting)
                .exit(lasting + milliseconds(5), 0);
            return script;
        };
    }

    // A metric bisect of the whole history on `hypervisor`'s guests, which finds and
    // verifies `first_bad`; `always` is --build-ahead.
    void expect_count_culprit(vm::Hypervisor& hypervisor, int first_bad, bool always = false) {
        bisect::StartOptions start = options(0, static_cast<int>(commits.size()) - 1);
        start.criterion = "metric:guest.count:+50%";
        start.build_ahead_always = always;
        auto id = bisect::create_bisect(start, *db, settings);
        ASSERT_TRUE(id) << id.error().message;
        auto status = run(*id, hypervisor);
        ASSERT_TRUE(status) << status.error().message;
        EXPECT_EQ(*status, core::BisectStatus::culprit) << out.str();
        EXPECT_EQ(db->bisect(*id).value()->culprit, commits[first_bad]);
    }

    Expected<core::BisectStatus> run(int64_t id, vm::Hypervisor& hypervisor) {
        return bisect::run_bisect(id, *db, hypervisor, settings, interrupted, out);
    }

    // Runs bisect `id`, Ctrl-C while its guest number `stop_at` runs, then resumes it:
    // the culprit `first_bad` found, and no step stored twice (a commit is decided once
    // in each role).
    void expect_resumed(int64_t id, int stop_at, int first_bad) {
        int guests = 0;
        auto failing = failing_from(first_bad);
        FakeHypervisor first([&](const vm::GuestSpec& spec) {
            if (++guests == stop_at)
                interrupted = true;
            return failing(spec);
        });
        auto stopped = run(id, first);
        ASSERT_TRUE(stopped) << stopped.error().message;
        EXPECT_EQ(*stopped, core::BisectStatus::interrupted) << out.str();
        size_t steps_before = db->bisect_steps(id).value().size();
        EXPECT_GE(steps_before, 1u);

        interrupted = false;
        FakeHypervisor second(failing_from(first_bad));
        auto status = run(id, second);
        ASSERT_TRUE(status) << status.error().message;
        EXPECT_EQ(*status, core::BisectStatus::culprit) << out.str();
        EXPECT_EQ(db->bisect(id).value()->culprit, commits[first_bad]);
        std::set<std::pair<std::string, core::StepRole>> seen;
        auto steps = db->bisect_steps(id).value();
        for (const auto& step : steps)
            EXPECT_TRUE(seen.insert({step.commit, step.role}).second)
                << step.commit << " " << core::to_string(step.role) << " twice";
        EXPECT_GT(seen.size(), steps_before);
    }

    std::multiset<core::StepRole> roles(int64_t id) {
        std::multiset<core::StepRole> out;
        auto steps = db->bisect_steps(id).value();
        for (const auto& step : steps)
            out.insert(step.role);
        return out;
    }
};

} // namespace

TEST(BisectDriver, FindsAndVerifiesThePlantedCulprit) {
    Driver driver(8, Git::real);
    auto id = bisect::create_bisect(driver.options(0, 7), *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    FakeHypervisor hypervisor(driver.failing_from(5));
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message << driver.out.str();
    EXPECT_EQ(*status, core::BisectStatus::culprit) << driver.out.str();
    auto info = driver.db->bisect(*id).value();
    EXPECT_EQ(info->culprit, driver.commits[5]);
    auto roles = driver.roles(*id);
    EXPECT_EQ(roles.count(core::StepRole::bad_endpoint), 1u);
    EXPECT_EQ(roles.count(core::StepRole::good_endpoint), 1u);
    EXPECT_GE(roles.count(core::StepRole::bisect), 2u);
    EXPECT_EQ(roles.count(core::StepRole::verify_parent), 1u);
    EXPECT_EQ(roles.count(core::StepRole::verify_culprit), 1u);
    // The verification held the culprit against its parent.
    auto steps = driver.db->bisect_steps(*id).value();
    for (const auto& step : steps) {
        if (step.role == core::StepRole::verify_parent) {
            EXPECT_EQ(step.commit, driver.commits[4]);
        }
    }
}

// Outputs wrong the same way in every sample from the culprit on, guest and server agreeing:
// only GOOD's, the reference taken first, shows them.
TEST(BisectDriver, OutputsWrongTheSameWayEverySampleAreHeldAgainstGOODAndBisected) {
    Driver driver(8);
    std::ofstream(driver.scenario) << "name: hunt\n"
                                      "kernels:\n"
                                      "  - {name: linux, git: linux, ref: master, config: [base]}\n"
                                      "matrix: {fs: 9p, cache: loose}\n"
                                      "workload: {command: make, outputs: [out.txt]}\n"
                                      "guest: {cpus: 1, accel: tcg, count_9p: false}\n";
    bisect::StartOptions start = driver.options(0, 7);
    start.criterion = "output";
    auto id = bisect::create_bisect(start, *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    std::set<std::string> bad(driver.commits.begin() + 5, driver.commits.end());
    FakeHypervisor hypervisor([&](const vm::GuestSpec& spec) {
        const bool wrong = bad.count(FakeCommitBuilder::commit_of(spec.kernel)) > 0;
        GuestScript script = test::quick_guest(0);
        return script.wrote(milliseconds(3), guest::k_work_tag,
                            {{"out.txt", wrong ? "stale\n" : "fresh\n"}});
    });
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::culprit) << driver.out.str();
    EXPECT_EQ(driver.db->bisect(*id).value()->culprit, driver.commits[5]);
    // GOOD went first: BAD's samples name it as their reference.
    const std::string out = driver.out.str();
    EXPECT_LT(out.find("GOOD " + driver.commits[0].substr(0, 12) + " first"),
              out.find("bad_endpoint"))
        << out;
    auto steps = driver.db->bisect_steps(*id).value();
    auto runs = driver.db->samples(driver.db->bisect(*id).value()->run_id).value();
    for (const auto& step : steps) {
        if (step.role != core::StepRole::bad_endpoint)
            continue;
        ASSERT_FALSE(step.samples.empty());
        for (const auto& sample : runs) {
            if (sample.cell_id != step.cell_id)
                continue;
            EXPECT_EQ(sample.outcome, core::Outcome::wrong_output);
            ASSERT_EQ(sample.lines.size(), 1u);
            EXPECT_NE(sample.lines[0].line.find("GOOD " + driver.commits[0].substr(0, 12)),
                      std::string::npos)
                << sample.lines[0].line;
        }
    }
}

TEST(BisectDriver, ACommitThatDoesNotBuildIsSkippedAndLeavesARange) {
    Driver driver(8);
    driver.builder.broken = {driver.commits[4]};
    auto id = bisect::create_bisect(driver.options(0, 7), *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    FakeHypervisor hypervisor(driver.failing_from(5));
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    // Whether 4 or 5 broke it cannot be told while 4 does not build.
    EXPECT_EQ(*status, core::BisectStatus::inconclusive) << driver.out.str();
    bool skipped = false;
    auto steps = driver.db->bisect_steps(*id).value();
    for (const auto& step : steps)
        skipped |= step.commit == driver.commits[4] && step.verdict == core::Verdict::skip &&
                   step.evidence.find("build-failed") != std::string::npos;
    EXPECT_TRUE(skipped) << driver.out.str();
    EXPECT_EQ(driver.history->marked, (std::vector<std::string>{"good 3", "bad 5", "skip 4"}));
    const std::string message = driver.db->bisect(*id).value()->message;
    EXPECT_NE(message.find(driver.commits[4].substr(0, 12) + " " + driver.commits[5].substr(0, 12)),
              std::string::npos)
        << message;
}

TEST(BisectDriver, EndpointsThatDoNotDifferAreNotReproducible) {
    Driver driver(4);
    auto id = bisect::create_bisect(driver.options(0, 3), *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    FakeHypervisor hypervisor(test::quick_guest(0));
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::not_reproducible) << driver.out.str();
    EXPECT_TRUE(driver.db->bisect(*id).value()->culprit.empty());
}

TEST(BisectDriver, AnInterruptedBisectResumesWithoutRedoingAStep) {
    Driver driver(8);
    auto id = bisect::create_bisect(driver.options(0, 7), *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    // Ctrl-C while the sixth guest runs: a few steps are stored by then.
    driver.expect_resumed(*id, 6, 5);
}

TEST(BisectDriver, InfraErrorsInARowStopTheBisectForAResume) {
    Driver driver(4);
    auto options = driver.options(0, 3);
    options.infra_retries = 1;
    auto id = bisect::create_bisect(options, *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    GuestScript no_guest;
    no_guest.start_error = "cannot set up guest memory";
    FakeHypervisor hypervisor(no_guest);
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::stopped) << driver.out.str();
    EXPECT_EQ(hypervisor.started().size(), 2u) << "the first attempt and one retry";
}

// The cost cap is checked before each commit past the endpoints: reached, the bisect ends
// as capped, says which part and how far it got, and stays ended on a resume.
TEST(BisectDriver, ABisectThatReachesItsCostCapEndsAsCappedBeforeItsNextCommit) {
    Driver driver(16);
    bisect::StartOptions options = driver.options(0, 15);
    options.max_boots = 1;
    auto id = bisect::create_bisect(options, *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    FakeHypervisor hypervisor(driver.failing_from(9));
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::capped) << driver.out.str();
    auto roles = driver.roles(*id);
    EXPECT_EQ(roles.count(core::StepRole::bisect), 0u);
    const std::string message = driver.db->bisect(*id).value()->message;
    EXPECT_NE(message.find("cost cap reached ("), std::string::npos) << message;
    EXPECT_NE(message.find(" guest boots of at most 1) before "), std::string::npos) << message;
    EXPECT_NE(message.find("rig bisect log " + std::to_string(*id)), std::string::npos) << message;
    auto again = driver.run(*id, hypervisor);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, core::BisectStatus::capped);
    EXPECT_EQ(driver.roles(*id).count(core::StepRole::bisect), 0u);
}

TEST(BisectDriver, APlantedFailureTheParentAlsoShowsLeavesTheCulpritUnverified) {
    Driver driver(8);
    auto id = bisect::create_bisect(driver.options(0, 7), *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    // Commit 4 tests clean in its six samples as a bisect step, then fails when the verification
    // samples it as the culprit's parent: the culprit does not stand out against it.
    auto fail_from_5 = driver.failing_from(5);
    const std::string parent = driver.commits[4];
    int parent_guests = 0;
    FakeHypervisor hypervisor([&](const vm::GuestSpec& spec) {
        if (FakeCommitBuilder::commit_of(spec.kernel) == parent && ++parent_guests > 6)
            return test::quick_guest(1);
        return fail_from_5(spec);
    });
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::unverified) << driver.out.str();
}

TEST(BisectDriver, ALongHistoryTakesALogarithmOfSteps) {
    Driver driver(1000);
    auto id = bisect::create_bisect(driver.options(0, 999), *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    FakeHypervisor hypervisor(driver.failing_from(637));
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::culprit) << driver.out.str();
    EXPECT_EQ(driver.db->bisect(*id).value()->culprit, driver.commits[637]);
    EXPECT_EQ(driver.roles(*id).count(core::StepRole::bisect), driver.history->marked.size());
    EXPECT_LE(driver.history->marked.size(), 10u) << "ceil(log2 999) steps at most";
    EXPECT_NE(driver.out.str().find("999 commits in"), std::string::npos) << driver.out.str();
}

TEST(BisectDriver, TheCulpritsRevertOnBadVerifiesIt) {
    Driver driver(8);
    auto options = driver.options(0, 7);
    options.verify_revert = true;
    auto id = bisect::create_bisect(options, *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    auto fail_from_5 = driver.failing_from(5);
    // BAD with the culprit reverted boots an image of its own, and passes.
    FakeHypervisor hypervisor([&](const vm::GuestSpec& spec) {
        if (spec.kernel.string().find("+patched") != std::string::npos)
            return test::quick_guest(0);
        return fail_from_5(spec);
    });
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::culprit) << driver.out.str();
    EXPECT_EQ(driver.roles(*id).count(core::StepRole::verify_revert), 1u);
    std::string patch = util::read_file(driver.settings.results_dir / "bisects" /
                                        std::to_string(*id) / "revert.patch");
    EXPECT_NE(patch.find("Revert \"commit 5\""), std::string::npos) << patch;
    auto log = bisect::bisect_log(*id, *driver.db, driver.settings);
    ASSERT_TRUE(log) << log.error().message;
    EXPECT_NE(log->find("# first bad commit: [" + driver.commits[5] + "]"), std::string::npos)
        << *log;
}

TEST(BisectDriver, ARevertThatDoesNotApplyLeavesTheCulpritUnverified) {
    Driver driver(8);
    driver.history->unrevertable = {driver.commits[5]};
    auto options = driver.options(0, 7);
    options.verify_revert = true;
    auto id = bisect::create_bisect(options, *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    FakeHypervisor hypervisor(driver.failing_from(5));
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::unverified) << driver.out.str();
    auto info = driver.db->bisect(*id).value();
    EXPECT_EQ(info->culprit, driver.commits[5]);
    EXPECT_NE(info->message.find("the revert on BAD does not apply"), std::string::npos)
        << info->message;
    EXPECT_EQ(driver.roles(*id).count(core::StepRole::verify_revert), 0u);
}

TEST(BisectDriver, TheHostIsProbedOncePerCreateAndPerRun) {
    Driver driver(4);
    driver.clock.advance(std::chrono::hours(1));
    auto id = bisect::create_bisect(driver.options(0, 3), *driver.db, driver.settings);
    ASSERT_TRUE(id) << id.error().message;
    EXPECT_EQ(driver.probe.facts_asked, 1);
    EXPECT_EQ(driver.probe.accels_asked, 1);
    auto info = driver.db->bisect(*id).value();
    auto run = driver.db->run(info->run_id).value();
    EXPECT_EQ(run->started_at, "2023-11-14T23:13:20Z") << "the clock's time, an hour in";
    EXPECT_NE(run->host_facts.find("\"qemu\":\"7.2.22\""), std::string::npos) << run->host_facts;
    // The revisions were resolved in a scratch folder, the bisect in its own.
    EXPECT_EQ(
        driver.history->opened,
        std::vector<std::string>{(driver.settings.results_dir / "bisects" / "resolve").string()});

    FakeHypervisor hypervisor(driver.failing_from(2));
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, core::BisectStatus::culprit) << driver.out.str();
    EXPECT_EQ(driver.probe.facts_asked, 1);
    EXPECT_EQ(driver.probe.accels_asked, 2) << "once for the whole run, not per step";
    EXPECT_EQ(driver.history->opened.back(),
              (driver.settings.results_dir / "bisects" / std::to_string(*id) / "git").string());
}

TEST(BisectDriver, ARevisionThatIsNoCommitIsAUsageError) {
    Driver driver(4);
    auto options = driver.options(0, 3);
    options.bad = "no-such-branch";
    auto id = bisect::create_bisect(options, *driver.db, driver.settings);
    ASSERT_FALSE(id);
    EXPECT_EQ(id.error().kind, ErrorKind::usage);
    EXPECT_NE(id.error().message.find("no-such-branch"), std::string::npos);
}

// --jobs 3 --multisection: rounds of three commits, each round's guests side by side, the
// planted culprit found and verified as one commit at a time finds it.
TEST(BisectDriver, MultisectionTestsThreeCommitsARoundAndVerifiesTheCulprit) {
    Driver driver(25);
    auto id = driver.create_multisection(3);
    ASSERT_TRUE(id) << id.error().message;
    FakeHypervisor hypervisor(driver.failing_from(17));
    auto status = driver.run(*id, hypervisor);
    ASSERT_TRUE(status) << status.error().message << driver.out.str();
    EXPECT_EQ(*status, core::BisectStatus::culprit) << driver.out.str();
    EXPECT_EQ(driver.db->bisect(*id).value()->culprit, driver.commits[17]);
    // 24 commits: rounds of three leave 24 -> 6 -> 2 -> 1, 3 rounds (binary takes 5 steps).
    EXPECT_LE(driver.roles(*id).count(core::StepRole::bisect), 9u) << driver.out.str();
    EXPECT_NE(driver.out.str().find("3 commits at once: "), std::string::npos) << driver.out.str();
    // The first round was the range's quarters: 6, 12 and 18 of the 24.
    const auto& marked = driver.history->marked;
    ASSERT_GE(marked.size(), 3u);
    EXPECT_EQ(std::vector<std::string>(marked.begin(), marked.begin() + 3),
              (std::vector<std::string>{"good 6", "good 12", "bad 18"}));
}

// A multisection bisect interrupted in a round resumes from its stored steps: none measured
// twice, the same culprit.
TEST(BisectDriver, AnInterruptedMultisectionResumesWithoutRedoingAStep) {
    Driver driver(25);
    auto id = driver.create_multisection(3);
    ASSERT_TRUE(id) << id.error().message;
    // Ctrl-C in the second round: the endpoints took 2 + 6 guests, the first round 6.
    driver.expect_resumed(*id, 17, 17);
}

// Under a metric criterion the driver builds, while a commit's guests run, the commits it
// may test next; each commit the bisect proper tests after its first step was built
// ahead. A duration or functional bisect builds nothing ahead (a build beside its guests
// would move its verdicts), nor does --no-build-ahead.
TEST(BisectDriver, AMetricBisectBuildsTheNextCommitsWhileTheGuestsRun) {
    for (const char* criterion : {"metric:guest.count:+50%", "errors"})
        for (bool ahead : {true, false}) {
            SCOPED_TRACE(std::string(criterion) + (ahead ? "" : " --no-build-ahead"));
            Driver d(17);
            bisect::StartOptions start = d.options(0, 16);
            start.criterion = criterion;
            start.build_ahead = ahead;
            const int first_bad = 11;
            FakeHypervisor hypervisor(
                d.counting_from(first_bad, std::string(criterion) == "errors"));
            auto id = bisect::create_bisect(start, *d.db, d.settings);
            ASSERT_TRUE(id) << id.error().message;
            auto status = d.run(*id, hypervisor);
            ASSERT_TRUE(status) << status.error().message;
            EXPECT_EQ(*status, core::BisectStatus::culprit) << d.out.str();
            EXPECT_EQ(d.db->bisect(*id).value()->culprit, d.commits[first_bad]);
            const bool metric = std::string(criterion) != "errors";
            if (!metric || !ahead) {
                EXPECT_TRUE(d.builder.ahead.empty());
                continue;
            }
            std::vector<std::string> tested;
            const auto steps = d.db->bisect_steps(*id).value();
            for (const auto& step : steps)
                if (step.role == core::StepRole::bisect)
                    tested.push_back(step.commit);
            ASSERT_GE(tested.size(), 3u);
            // Each step says which commits it built ahead, finished or not: whether one
            // finished before the guests did is the host's timing, what was planned is not.
            std::string planned;
            std::istringstream lines(d.out.str());
            for (std::string line; std::getline(lines, line);)
                if (auto at = line.find("built ahead while its guests ran: ");
                    at != std::string::npos)
                    planned += line.substr(at) + "\n";
            for (size_t i = 1; i < tested.size(); ++i)
                EXPECT_NE(planned.find(rig::util::short_sha(tested[i])), std::string::npos)
                    << tested[i] << " was not built ahead\n"
                    << planned;
            EXPECT_FALSE(d.builder.ahead.empty());
        }
}

// Builds ahead that outlast the step's guests are stopped when the guests are done, and
// the step goes on: the bisect ends as it would without them.
TEST(BisectDriver, BuildsAheadThatOutlastTheGuestsAreStopped) {
    Driver d(9);
    d.builder.ahead_cost = milliseconds(300);
    FakeHypervisor hypervisor(d.counting_from(5));
    d.expect_count_culprit(hypervisor, 5);
    EXPECT_FALSE(d.builder.ahead.empty());
    EXPECT_NE(d.out.str().find("(not built)"), std::string::npos) << d.out.str();
}

// Builds ahead take only cores no guest takes, and only where the guests outlast two
// builds: a host whose one core the guest takes builds nothing ahead, nor do guests that
// end before a build would, unless --build-ahead says to.
TEST(BisectDriver, GuestsShorterThanTwoBuildsBuildNothingAheadUnlessTold) {
    for (bool always : {false, true}) {
        SCOPED_TRACE(always ? "--build-ahead" : "by default");
        Driver d(9);
        d.builder.build_cost = milliseconds(30);
        FakeHypervisor hypervisor(d.counting_from(5));
        d.expect_count_culprit(hypervisor, 5, always);
        EXPECT_EQ(d.builder.ahead.empty(), !always);
    }
}

TEST(BisectDriver, AHostWithoutASpareCoreBuildsNothingAhead) {
    Driver d(9);
    FakeHypervisor hypervisor(d.counting_from(5));
    hypervisor.set_host_cpus({{0, 0, 0, 0}});
    d.expect_count_culprit(hypervisor, 5);
    EXPECT_TRUE(d.builder.ahead.empty());
}
