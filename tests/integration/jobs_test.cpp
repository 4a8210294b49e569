// SPDX-License-Identifier: MIT
// `rig run --jobs 2` with real QEMU guests of one vCPU on this two-CPU machine: each
// guest's threads run on a CPU of their own (read back from the kernel while they run),
// the CPUs are recorded per sample, a cell's samples go round the CPUs, a kill -9 with
// both guests in flight leaves nothing behind and the resume stores every sample once,
// and more jobs than the CPUs allow is an error that says what fits.
#include "rig_binary.hpp"
#include "scratch.hpp"
#include "util/strings.hpp"

#include <chrono>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using rig::test::one;
using rig::test::query;
using rig::test::run_rig;

namespace {

constexpr auto k_run_timeout = std::chrono::minutes(15);
constexpr int k_exit_usage = 2; // README "Exit codes"

struct Scratch : rig::test::Scratch {
    explicit Scratch(const std::string& name) : rig::test::Scratch("jobs-" + name) {}
};

const char* const k_scenario = "tests/data/jobs/four.yaml";

} // namespace

TEST(Jobs, TwoGuestsRunPinnedToCpusOfTheirOwnAndTheSamplesSayWhich) {
    if (::sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "needs two CPUs";
    Scratch scratch("pinned");
    fs::path log = scratch.dir / "rig.log";
    pid_t rig = rig::test::start_rig_logged({"--db", scratch.db, "run", k_scenario}, log);
    rig::test::SeenGuests seen;
    int status = rig::test::watch_guests_until_exit(rig, scratch.dir.string(), seen, k_run_timeout);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << rig::test::read_text(log);
    EXPECT_EQ(seen.most_at_once, 2u) << rig::test::read_text(log);
    rig::test::expect_samples_ran_where_recorded(scratch.db, seen, 4);
    // Started as root, rig runs QEMU as its own unprivileged user.
    if (::geteuid() == 0) {
        EXPECT_EQ(seen.uids, std::set<long>({rig::test::account_uid("rig-qemu")}));
    }
    EXPECT_NE(rig::test::read_text(log).find("2 guests at once per host on CPUs 0 | 1"),
              std::string::npos)
        << rig::test::read_text(log);
}

TEST(Jobs, KillWithTwoGuestsInFlightThenResumeStoresEverySampleOnce) {
    Scratch scratch("kill");
    fs::path log = scratch.dir / "rig.log";
    pid_t rig =
        rig::test::start_rig_logged({"--db", scratch.db, "run", "--jobs", "2", k_scenario}, log);
    ASSERT_TRUE(rig::test::wait_while_running(
        rig, k_run_timeout,
        [&] { return rig::test::qemu_threads(scratch.dir.string()).size() == 2; }, 100ms))
        << rig::test::read_text(log);
    EXPECT_TRUE(rig::test::kill_leaves_no_process(rig, scratch.dir.string()));
    auto resumed = run_rig({"--db", scratch.db, "run", "--resume"}, k_run_timeout);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_EQ(resumed.out.rfind("run 1: ", 0), 0u) << resumed.out; // the same run goes on
    EXPECT_EQ(one(scratch.db, "SELECT count(*), count(DISTINCT cell_id || '/' || repetition), "
                              "sum(outcome = 'ok'), count(DISTINCT cpus) FROM samples"),
              "4\t4\t4\t2");
    EXPECT_EQ(one(scratch.db, "SELECT count(*), min(status) FROM runs"), "1\tfinished");
    EXPECT_TRUE(rig::test::processes_mentioning(scratch.dir.string()).empty());
}

TEST(Jobs, MoreJobsThanTheCpusAllowIsAnErrorThatSaysWhatFits) {
    Scratch scratch("too-many");
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    std::string jobs = std::to_string(cpus + 1);
    auto result = run_rig({"--db", scratch.db, "run", "--jobs", jobs, k_scenario}, 2min);
    EXPECT_EQ(result.exit_code, k_exit_usage) << result.out << result.err;
    EXPECT_NE(result.err.find(jobs + " guests at once need"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("fit (--jobs "), std::string::npos) << result.err;
    // No run was begun, no guest started.
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM runs"), "0");
    // The scenario's own `jobs:` is named by its place in the file.
    fs::path scenario = scratch.dir / "many.yaml";
    std::string text = rig::test::read_text(rig::test::source_root() / k_scenario);
    text.replace(text.find("jobs: 2"), 7, "jobs: " + jobs);
    std::ofstream(scenario) << text;
    auto located = run_rig({"--db", scratch.db, "run", scenario.string()}, 2min);
    EXPECT_NE(located.exit_code, 0);
    EXPECT_NE(located.err.find(scenario.string() + ":10:7: jobs: " + jobs + " guests at once"),
              std::string::npos)
        << located.err;
}
