// SPDX-License-Identifier: MIT
// `rig run` with backend slurm on a real one-node cluster (scripts/start-slurm, started and
// stopped by this suite): parity with the QEMU backend, the figures of what Slurm adds per
// sample, infra retries of a cancelled job and of a killed QEMU, a kill -9 of rig (shown as
// interrupted) and its resume, a node failure retried and a time limit stored as the
// sample's result, a refused partition named by its key, and rig doctor's Slurm checks.
#include "rig_binary.hpp"
#include "scratch.hpp"
#include "slurm_cluster.hpp"
#include "util/strings.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

using rig::test::one;
using rig::test::processes_mentioning;
using rig::test::query;
using rig::test::run_rig;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const auto k_run_timeout = std::chrono::minutes(20);

struct Scratch : rig::test::Scratch {
    explicit Scratch(const std::string& name) : rig::test::Scratch("slurm-" + name) {}
};

rig::proc::RunResult run_program(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout = std::chrono::minutes(2)) {
    rig::proc::RunOptions options;
    options.timeout = timeout;
    options.cwd = rig::test::source_root();
    auto result = rig::proc::run(argv, options);
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? *result : rig::proc::RunResult{};
}

// The cluster lives as long as the suite.
class Cluster : public ::testing::Environment {
public:
    void SetUp() override { m_cluster = std::make_unique<rig::test::SlurmCluster>(); }
    void TearDown() override { m_cluster.reset(); }

private:
    std::unique_ptr<rig::test::SlurmCluster> m_cluster;
};

const auto* const k_cluster = ::testing::AddGlobalTestEnvironment(new Cluster);

// Tasks still queued or running on the cluster.
std::vector<std::string> live_jobs() {
    auto result = run_program({"squeue", "--noheader", "--array",
                               "--states=PENDING,RUNNING,COMPLETING,SUSPENDED", "--format=%i %j"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    std::vector<std::string> jobs;
    rig::util::for_each_line(result.out, [&](std::string_view line) {
        if (!rig::util::trim(line).empty())
            jobs.emplace_back(line);
    });
    return jobs;
}

// The id (ARRAY_INDEX) of a running task, or "".
std::string running_task() {
    auto result =
        run_program({"squeue", "--noheader", "--array", "--states=RUNNING", "--format=%i"});
    std::string out(rig::util::trim(result.out));
    return out.substr(0, out.find('\n'));
}

// QEMU processes of samples under `dir`, by the sample folder in their arguments.
std::vector<int> guests_under(const fs::path& dir) {
    std::vector<int> out;
    for (int pid : processes_mentioning((dir / "runs").string())) {
        std::string comm = rig::test::read_text("/proc/" + std::to_string(pid) + "/comm");
        if (comm.rfind("qemu-system", 0) == 0)
            out.push_back(pid);
    }
    return out;
}

// Everything a sample records except timings and where it ran, one row per sample.
const char* const k_record_columns =
    "c.fs, c.cache, s.repetition, s.outcome, s.accel, s.kernel_artifact, s.exit_status, "
    "s.error_count, s.warning_count, s.mount_requested, s.mount_negotiated, "
    "s.msize_negotiated, s.cache_negotiated, s.qemu_cpu_seconds > 0, s.guest_seconds >= 0, "
    "s.wall_seconds > 0, s.helper_cpu_seconds > 0, "
    "(SELECT group_concat(severity || '|' || source || '|' || signature, ';') FROM "
    "(SELECT * FROM error_lines WHERE sample_id = s.id ORDER BY id)), "
    "(SELECT group_concat(name || '|' || unit, ';') FROM "
    "(SELECT * FROM metrics WHERE sample_id = s.id ORDER BY name))";

std::vector<std::string> records(const fs::path& db) {
    return query(db, std::string("SELECT ") + k_record_columns +
                         " FROM samples s JOIN cells c USING (run_id, cell_id) ORDER BY c.fs, "
                         "c.cache, s.repetition");
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

TEST(Slurm, SameCellsGiveTheSameRecordsAsTheQemuBackend) {
    Scratch qemu("parity-qemu"), slurm("parity-slurm");
    auto direct_start = Clock::now();
    auto direct =
        run_rig({"--db", qemu.db, "run", "--backend", "qemu", "tests/data/run/slurm-parity.yaml"},
                k_run_timeout);
    double direct_seconds = seconds_since(direct_start);
    ASSERT_EQ(direct.exit_code, 0) << direct.out << direct.err;
    auto batch_start = Clock::now();
    auto batch =
        run_rig({"--db", slurm.db, "run", "tests/data/run/slurm-parity.yaml"}, k_run_timeout);
    double batch_seconds = seconds_since(batch_start);
    ASSERT_EQ(batch.exit_code, 0) << batch.out << batch.err;
    EXPECT_NE(batch.out.find("backend slurm"), std::string::npos) << batch.out;
    EXPECT_NE(batch.out.find("slurm: queued 4, running 0, done 0/4"), std::string::npos)
        << batch.out;
    EXPECT_NE(batch.out.find("done 4/4"), std::string::npos) << batch.out;
    // Nothing went wrong, so nothing was retried: one attempt per sample.
    EXPECT_EQ(batch.out.find("infra, retried"), std::string::npos) << batch.out;

    auto expected = records(qemu.db), actual = records(slurm.db);
    ASSERT_EQ(expected.size(), 4u);
    EXPECT_EQ(actual, expected);
    // Not equal by being empty: the records carry what the cells are about.
    EXPECT_EQ(expected[0].rfind("9p\tloose\t0\tok\t", 0), 0u) << expected[0];
    EXPECT_NE(expected[0].find("warning|workload|parity.c:"), std::string::npos) << expected[0];
    EXPECT_NE(expected[0].find("files_built|count"), std::string::npos) << expected[0];
    EXPECT_NE(expected[0].find("9p.work.getattr|requests"), std::string::npos) << expected[0];
    EXPECT_NE(expected[3].find("virtiofs.requests|requests"), std::string::npos) << expected[3];
    // The coordinator wrote the database; the worker wrote records in the shared folder.
    EXPECT_EQ(one(slurm.db, "SELECT status FROM runs"), "finished");
    EXPECT_TRUE(fs::exists(slurm.dir / "runs/1/jobs/0.json"));
    EXPECT_TRUE(fs::exists(slurm.dir / "runs/1/jobs/0.0.record.json"));
    EXPECT_TRUE(live_jobs().empty());
    EXPECT_TRUE(guests_under(slurm.dir).empty());

    // What Slurm adds per sample, side by side with the QEMU backend on the same cells.
    auto median_total = [](const fs::path& db) {
        auto rows = query(db, "SELECT total_seconds FROM samples ORDER BY total_seconds");
        return rows.size() < 4 ? 0.0 : (std::stod(rows[1]) + std::stod(rows[2])) / 2;
    };
    std::printf("per sample, 4 samples: qemu backend %.1f s of run wall time (median sample "
                "%.1f s), slurm backend %.1f s (median sample %.1f s): Slurm adds %.1f s per "
                "sample\n",
                direct_seconds / 4, median_total(qemu.db), batch_seconds / 4,
                median_total(slurm.db), (batch_seconds - direct_seconds) / 4);
    RecordProperty("qemu_seconds_per_sample", std::to_string(direct_seconds / 4));
    RecordProperty("slurm_seconds_per_sample", std::to_string(batch_seconds / 4));
}

TEST(Slurm, CancelledJobsAndKilledGuestsAreRetriedAndAKilledRigResumes) {
    Scratch scratch("faults");
    fs::path log = scratch.dir / "rig.log";
    pid_t rig = rig::test::start_rig_logged(
        {"--db", scratch.db.string(), "run", "tests/data/run/slurm-faults.yaml"}, log);
    auto guest_running = [&] { return !guests_under(scratch.dir).empty(); };

    // 1. scancel the first running job from outside: the cluster ended it, not the kernel.
    ASSERT_TRUE(rig::test::wait_while_running(rig, std::chrono::minutes(10), guest_running))
        << rig::test::read_text(log);
    std::string task = running_task();
    ASSERT_FALSE(task.empty());
    auto cancelled = run_program({"scancel", task});
    ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
    ASSERT_TRUE(rig::test::wait_while_running(rig, std::chrono::minutes(5), [&] {
        return rig::test::read_text(log).find("ended CANCELLED") != std::string::npos;
    })) << rig::test::read_text(log);

    // 2. Kill the QEMU of the next guest: an infra error, retried.
    ASSERT_TRUE(rig::test::wait_while_running(rig, std::chrono::minutes(10), guest_running))
        << rig::test::read_text(log);
    // Give it time to boot into its workload, so that the kill is not a failure to start.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    for (int pid : guests_under(scratch.dir))
        ::kill(pid, SIGKILL);
    ASSERT_TRUE(rig::test::wait_while_running(rig, std::chrono::minutes(5), [&] {
        return rig::test::read_text(log).find("the sample was infra-error") != std::string::npos;
    })) << rig::test::read_text(log);

    // 3. kill -9 rig while a job runs: the job carries on without it.
    ASSERT_TRUE(rig::test::wait_while_running(rig, std::chrono::minutes(10), guest_running))
        << rig::test::read_text(log);
    ::kill(rig, SIGKILL);
    ::waitpid(rig, nullptr, 0);
    EXPECT_FALSE(live_jobs().empty());
    std::string before = rig::test::read_text(log);
    EXPECT_NE(before.find("infra, retried"), std::string::npos) << before;
    // Stored as running, shown as interrupted: no rig holds the run any more.
    EXPECT_EQ(one(scratch.db, "SELECT status FROM runs"), "running");
    auto shown = run_rig({"--db", scratch.db.string(), "report"});
    EXPECT_NE(shown.out.find("run 1 (interrupted"), std::string::npos) << shown.out << shown.err;

    auto resumed = run_rig({"--db", scratch.db.string(), "run", "--resume", "1"}, k_run_timeout);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_NE(resumed.out.find("adopted Slurm task"), std::string::npos) << resumed.out;
    // Every sample once, each a result; no retry was stored as a kernel result.
    EXPECT_EQ(one(scratch.db, "SELECT count(*), count(DISTINCT cell_id), sum(outcome = 'ok') "
                              "FROM samples"),
              "3\t3\t3");
    EXPECT_EQ(one(scratch.db, "SELECT status FROM runs"), "finished");
    EXPECT_TRUE(live_jobs().empty());
    EXPECT_TRUE(guests_under(scratch.dir).empty());
}

// The suite's node set down, as an admin would under a running task.
void set_node_down() {
    auto result =
        run_program({"scontrol", "update", "nodename=rig-node", "state=down", "reason=rig test"});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
}

// And back up: resumed, unless the cluster brought it back itself (ReturnToService=2 does
// once its slurmd registers again, and scontrol refuses to resume a node that is up).
void bring_node_back() {
    auto result = run_program({"scontrol", "update", "nodename=rig-node", "state=resume"});
    if (result.exit_code == 0)
        return;
    auto state = run_program({"sinfo", "--noheader", "--nodes=rig-node", "--format=%T"});
    EXPECT_EQ(state.out.find("down"), std::string::npos) << result.err << state.out;
}

TEST(Slurm, ANodeFailureIsRetriedAndATimeLimitIsTheSamplesResult) {
    Scratch scratch("limits");
    fs::path log = scratch.dir / "rig.log";
    pid_t rig = rig::test::start_rig_logged(
        {"--db", scratch.db.string(), "run", "tests/data/run/slurm-limits.yaml"}, log);
    // The node goes down under the first attempt's guest: NODE_FAIL, the machinery's.
    ASSERT_TRUE(rig::test::wait_while_running(rig, std::chrono::minutes(10), [&] {
        return !guests_under(scratch.dir).empty();
    })) << rig::test::read_text(log);
    set_node_down();
    bool failed = rig::test::wait_while_running(rig, std::chrono::minutes(3), [&] {
        return rig::test::read_text(log).find("ended NODE_FAIL") != std::string::npos;
    });
    bring_node_back();
    ASSERT_TRUE(failed) << rig::test::read_text(log);
    // The retry outlives the job's one-minute limit: TIMEOUT, a result, not retried.
    int status = -1;
    for (auto deadline = Clock::now() + std::chrono::minutes(6);
         Clock::now() < deadline && ::waitpid(rig, &status, WNOHANG) != rig;)
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (status == -1) {
        ::kill(rig, SIGKILL);
        ::waitpid(rig, nullptr, 0);
    }
    std::string text = rig::test::read_text(log);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status << "\n" << text;
    EXPECT_NE(text.find("infra, retried: Slurm task"), std::string::npos) << text;
    EXPECT_EQ(one(scratch.db, "SELECT count(*), outcome FROM samples"), "1\ttime-limit");
    std::string evidence = one(scratch.db, "SELECT evidence FROM samples");
    EXPECT_NE(evidence.find("ended TIMEOUT"), std::string::npos) << evidence;
    EXPECT_NE(evidence.find("past the job's time limit (slurm.time 1 min)"), std::string::npos)
        << evidence;
    EXPECT_EQ(one(scratch.db, "SELECT status FROM runs"), "finished");
    EXPECT_TRUE(live_jobs().empty());
    EXPECT_TRUE(guests_under(scratch.dir).empty());
}

TEST(Slurm, InterruptCancelsTheRunsJobsAndResumeRunsOnlyWhatIsMissing) {
    Scratch scratch("interrupt");
    fs::path log = scratch.dir / "rig.log";
    pid_t rig = rig::test::start_rig_logged(
        {"--db", scratch.db.string(), "run", "tests/data/run/slurm-faults.yaml"}, log);
    // Ctrl-C once the first sample is stored and the next one runs.
    ASSERT_TRUE(rig::test::wait_while_running(rig, std::chrono::minutes(10), [&] {
        return rig::test::read_text(log).find(": ok in ") != std::string::npos &&
               !guests_under(scratch.dir).empty();
    })) << rig::test::read_text(log);
    EXPECT_EQ(rig::test::interrupt(rig), 130) << rig::test::read_text(log);
    EXPECT_NE(rig::test::read_text(log).find("cancelling the run's jobs"), std::string::npos);
    EXPECT_TRUE(live_jobs().empty());
    std::string stored = one(scratch.db, "SELECT count(*) FROM samples WHERE outcome = 'ok'");
    EXPECT_GE(std::stoi(stored), 1);
    EXPECT_EQ(one(scratch.db, "SELECT status FROM runs"), "interrupted");

    auto resumed = run_rig({"--db", scratch.db.string(), "run", "--resume"}, k_run_timeout);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_NE(resumed.out.find("resuming: " + stored + " samples already done"), std::string::npos)
        << resumed.out;
    EXPECT_EQ(one(scratch.db, "SELECT count(*), count(DISTINCT cell_id), sum(outcome = 'ok') "
                              "FROM samples"),
              "3\t3\t3");
    EXPECT_TRUE(live_jobs().empty());
}

TEST(Slurm, ARefusedPartitionNamesTheScenarioKey) {
    Scratch scratch("bad-partition");
    auto result = run_rig({"--db", scratch.db, "run", "tests/data/run/slurm-bad-partition.yaml"},
                          k_run_timeout);
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find("slurm-bad-partition.yaml:11:14: slurm.partition: sbatch refused "
                              "the job:"),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("Invalid partition name"), std::string::npos) << result.err;
    EXPECT_TRUE(live_jobs().empty());
}

TEST(Slurm, DoctorChecksSlurmMungeAndTheSharedFolder) {
    auto result = run_rig({"doctor"});
    EXPECT_TRUE(result.exit_code == 0 || result.exit_code == 3) << result.exit_code;
    EXPECT_NE(result.out.find("partition state nodes: rig* up 1"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("a credential made and read back (socket="), std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("is writable; on a cluster every node must see it"),
              std::string::npos)
        << result.out;
}
