// SPDX-License-Identifier: MIT
// Tests of proc/: run(), Child supervision, the parent-death guarantee and CPU accounting.
#include "proc/cpu.hpp"
#include "proc/git.hpp"
#include "proc/process.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <grp.h>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>

using namespace rig::proc;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using rig::test::TempDir;

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Gone means no such process, or a zombie that a reaper other than us has yet to collect.
bool process_gone(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    size_t name_end = stat.rfind(')');
    return name_end == std::string::npos || stat.compare(name_end, 3, ") Z") == 0;
}

// Whether `done()` holds within `limit`, looked at every 5 ms.
bool holds_within(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (!done()) {
        if (Clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

// The limits are generous: they pass at once when all goes well, and an address-sanitized
// build on a loaded two-core machine can take seconds to reap a group.
bool gone_within(pid_t pid, std::chrono::milliseconds limit) {
    return holds_within([pid] { return process_gone(pid); }, limit);
}

// Reads a pid that a child wrote to a file, waiting for the write.
pid_t read_pid(const std::filesystem::path& path) {
    auto deadline = Clock::now() + 2s;
    while (Clock::now() < deadline) {
        std::string text = read_text(path);
        if (!text.empty() && text.back() == '\n')
            return std::stoi(text);
        std::this_thread::sleep_for(5ms);
    }
    return -1;
}

// GCC 12 warns about designated initializers that leave members out.
RunOptions limits(std::chrono::milliseconds timeout, size_t max_output = RunOptions{}.max_output) {
    RunOptions options;
    options.timeout = timeout;
    options.max_output = max_output;
    return options;
}

RunOptions in_dir(const std::filesystem::path& cwd) {
    RunOptions options;
    options.cwd = cwd;
    return options;
}

RunResult must_run(const std::vector<std::string>& argv, const RunOptions& options = {}) {
    auto result = run(argv, options);
    if (!result) {
        ADD_FAILURE() << result.error().message;
        return {};
    }
    return *result;
}

} // namespace

TEST(Run, ExitCodes) {
    auto ok = must_run({"true"});
    EXPECT_EQ(ok.exit_code, 0);
    EXPECT_EQ(ok.signal, 0);
    EXPECT_FALSE(ok.timed_out);
    EXPECT_EQ(must_run({"false"}).exit_code, 1);
    EXPECT_EQ(must_run({"sh", "-c", "exit 3"}).exit_code, 3);
}

// What rig sets for itself (SIGPIPE ignored, a handler for its interrupts, signals
// blocked) does not reach a child: it starts with nothing ignored and nothing blocked.
TEST(Run, AChildStartsWithDefaultSignalsWhateverRigSet) {
    // SIGQUIT too, as a non-interactive shell ignores it for a background job, rig's
    // parent included.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction handler {};
    handler.sa_handler = [](int) {};
    struct sigaction old_pipe {};
    struct sigaction old_usr2 {};
    struct sigaction old_quit {};
    ::sigaction(SIGPIPE, &ignore, &old_pipe);
    ::sigaction(SIGQUIT, &ignore, &old_quit);
    ::sigaction(SIGUSR2, &handler, &old_usr2);
    sigset_t hup;
    sigset_t old_mask;
    ::sigemptyset(&hup);
    ::sigaddset(&hup, SIGHUP);
    ::pthread_sigmask(SIG_BLOCK, &hup, &old_mask);
    auto result = must_run({"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"});
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    ::sigaction(SIGUSR2, &old_usr2, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
    EXPECT_EQ(result.out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(Run, Signal) {
    auto result = must_run({"sh", "-c", "kill -9 $$"});
    EXPECT_EQ(result.exit_code, -1);
    EXPECT_EQ(result.signal, SIGKILL);
}

TEST(Run, MissingProgramIsAnError) {
    auto missing = run({"rig-no-such-program"});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().kind, rig::ErrorKind::infra);
    EXPECT_EQ(missing.error().message.rfind("cannot start rig-no-such-program: ", 0), 0u)
        << missing.error().message;

    auto missing_path = run({"/nonexistent/rig-program"});
    ASSERT_FALSE(missing_path);
    EXPECT_NE(missing_path.error().message.find("cannot start /nonexistent/rig-program: "),
              std::string::npos)
        << missing_path.error().message;

    EXPECT_FALSE(run({}));
    EXPECT_FALSE(run({"true"}, in_dir("/nonexistent/dir")));
}

TEST(Run, CapturesBothStreams) {
    auto result = must_run({"sh", "-c", "echo out; echo err >&2; echo more"});
    EXPECT_EQ(result.out, "out\nmore\n");
    EXPECT_EQ(result.err, "err\n");
}

TEST(Run, StdinIsDevNull) {
    // Would hang reading the test's own stdin otherwise.
    auto result = must_run({"cat"}, limits(2s));
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.out, "");
}

TEST(Run, HugeOutputIsTruncatedWithoutDeadlock) {
    auto start = Clock::now();
    auto result = must_run({"head", "-c", "50000000", "/dev/zero"}, limits(20s));
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_code, 0);
    ASSERT_EQ(result.out.size(), RunOptions{}.max_output);
    EXPECT_EQ(result.out.find_first_not_of('\0'), std::string::npos);
    EXPECT_LT(Clock::now() - start, 10s);
}

TEST(Run, BothStreamsFullAtOnce) {
    // Fills stderr before writing stdout: reading one stream at a time would deadlock.
    auto result =
        must_run({"sh", "-c", "head -c 3000000 /dev/zero >&2; echo done"}, limits(10s, 1000));
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.out, "done\n");
    EXPECT_EQ(result.err.size(), 1000u);
}

TEST(Run, KeepsTheTail) {
    std::string expected;
    for (int i = 1; i <= 100000; ++i)
        expected += std::to_string(i) + "\n";
    auto result = must_run({"seq", "1", "100000"}, limits(10s, 20));
    EXPECT_EQ(result.out, expected.substr(expected.size() - 20));

    EXPECT_EQ(must_run({"echo", "hello"}, limits(10s, 0)).out, "");
}

TEST(Run, NoTimeout) {
    auto result = must_run({"true"}, limits(std::chrono::milliseconds::max()));
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_code, 0);
}

TEST(Run, Timeout) {
    auto start = Clock::now();
    auto result = must_run({"sleep", "30"}, limits(200ms));
    auto elapsed = Clock::now() - start;
    EXPECT_TRUE(result.timed_out);
    EXPECT_EQ(result.exit_code, -1);
    EXPECT_EQ(result.signal, SIGKILL);
    EXPECT_GE(elapsed, 200ms);
    EXPECT_LT(elapsed, 1500ms);
}

TEST(Run, TimeoutKillsTheGroup) {
    // sh forks sleep, which holds the pipes: killing only sh would leave run() waiting
    // for EOF.
    // The limit leaves sh time to start and write the pid under a loaded CI machine (a
    // kernel build runs beside the unit tests): 200 ms was seen to pass first.
    TempDir dir;
    auto pid_file = dir.path() / "pid";
    auto start = Clock::now();
    auto result =
        must_run({"sh", "-c", "sleep 30 & echo $! > \"$1\"; wait", "sh", pid_file}, limits(2s));
    EXPECT_TRUE(result.timed_out);
    EXPECT_LT(Clock::now() - start, 6s);
    pid_t sleep_pid = read_pid(pid_file);
    ASSERT_GT(sleep_pid, 0);
    EXPECT_TRUE(gone_within(sleep_pid, 10s));
}

TEST(Run, LeftoverGroupMembersAreKilled) {
    TempDir dir;
    auto pid_file = dir.path() / "pid";
    auto start = Clock::now();
    auto result =
        must_run({"sh", "-c", "sleep 30 & echo $! > \"$1\"; echo started", "sh", pid_file});
    EXPECT_LT(Clock::now() - start, 1500ms);
    EXPECT_FALSE(result.timed_out);
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.out, "started\n");
    pid_t sleep_pid = read_pid(pid_file);
    ASSERT_GT(sleep_pid, 0);
    EXPECT_TRUE(gone_within(sleep_pid, 10s));
}

TEST(Run, CwdAndEnv) {
    TempDir dir;
    EXPECT_EQ(must_run({"pwd"}, in_dir(dir.path())).out, dir.path().string() + "\n");

    RunOptions options;
    options.env = {{"RIG_PROC_TEST", "a b;c"}, {"HOME", "/rig-home"}};
    auto result = must_run({"sh", "-c",
                            "printf '%s|%s|%s' \"$RIG_PROC_TEST\" \"$HOME\" "
                            "\"${PATH:+has-path}\""},
                           options);
    EXPECT_EQ(result.out, "a b;c|/rig-home|has-path");
}

TEST(Run, ArgumentsAreLiteral) {
    std::vector<std::string> args = {"a b", "it's", "x;y", "$HOME", "\"q\"", "", "*", "`id`"};
    std::vector<std::string> argv = {"printf", "[%s]"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string expected;
    for (const auto& arg : args)
        expected += "[" + arg + "]";
    EXPECT_EQ(must_run(argv).out, expected);
}

TEST(Run, ConcurrentCallsFromThreads) {
    std::vector<std::thread> threads;
    std::atomic<int> correct{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([t, &correct] {
            for (int i = 0; i < 10; ++i) {
                auto result = run({"echo", std::to_string(t * 100 + i)}, limits(10s));
                if (result && result->out == std::to_string(t * 100 + i) + "\n")
                    ++correct;
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(correct, 40);
}

TEST(Run, NoDescriptorLeaks) {
    auto count_fds = [] {
        return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                             std::filesystem::directory_iterator{});
    };
    auto before = count_fds();
    must_run({"true"});
    must_run({"sleep", "30"}, limits(10ms));
    EXPECT_FALSE(run({"rig-no-such-program"}));
    auto not_executable = run({"/etc/passwd"}); // execve fails after fork
    ASSERT_FALSE(not_executable);
    EXPECT_EQ(not_executable.error().message, "cannot start /etc/passwd: Permission denied");
    EXPECT_FALSE(Child::spawn({"/etc/passwd"}));
    EXPECT_TRUE(Child::spawn({"true"}));
    EXPECT_EQ(count_fds(), before);
    // Every child forked above, the failed ones too, has been reaped.
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

TEST(FindProgram, SearchesPath) {
    auto sh = find_program("sh");
    ASSERT_TRUE(sh);
    EXPECT_TRUE(sh->is_absolute());
    EXPECT_EQ(sh->filename(), "sh");
    EXPECT_FALSE(find_program("rig-no-such-program"));
    EXPECT_FALSE(find_program(""));
    EXPECT_EQ(find_program("/bin/sh"), std::filesystem::path("/bin/sh"));
    EXPECT_FALSE(find_program("/etc/passwd")); // not executable
    EXPECT_FALSE(find_program("/bin"));        // a directory
}

TEST(Child, StopWithSigterm) {
    auto child = Child::spawn({"sleep", "100"});
    ASSERT_TRUE(child) << child.error().message;
    pid_t pid = (*child)->pid();
    EXPECT_TRUE((*child)->running());
    EXPECT_FALSE((*child)->exit_status());
    EXPECT_FALSE((*child)->wait_for(50ms));
    EXPECT_EQ((*child)->stop(2s), 128 + SIGTERM);
    EXPECT_FALSE((*child)->running());
    EXPECT_EQ((*child)->exit_status(), 128 + SIGTERM);
    EXPECT_TRUE(process_gone(pid));
}

TEST(Child, SigkillAfterGrace) {
    // sh ignores SIGTERM and so does the sleep it forks, which inherits the disposition.
    TempDir dir;
    auto pid_file = dir.path() / "pid";
    auto child = Child::spawn(
        {"sh", "-c", "trap '' TERM; sleep 100 & echo $! > \"$1\"; wait", "sh", pid_file});
    ASSERT_TRUE(child) << child.error().message;
    pid_t sh_pid = (*child)->pid();
    pid_t sleep_pid = read_pid(pid_file);
    ASSERT_GT(sleep_pid, 0);

    auto start = Clock::now();
    EXPECT_EQ((*child)->stop(200ms), 128 + SIGKILL);
    auto elapsed = Clock::now() - start;
    EXPECT_GE(elapsed, 200ms);
    EXPECT_LT(elapsed, 1500ms);
    EXPECT_TRUE(process_gone(sh_pid));
    EXPECT_TRUE(gone_within(sleep_pid, 10s));
}

TEST(Child, ExitStatusAndOutputFiles) {
    TempDir dir;
    auto log = dir.path() / "log";
    SpawnOptions options;
    options.cwd = dir.path();
    options.env = {{"RIG_X", "x"}};
    options.stdout_file = log;
    auto child =
        Child::spawn({"sh", "-c", "echo out; echo err >&2; echo $RIG_X; pwd; exit 7"}, options);
    ASSERT_TRUE(child) << child.error().message;
    EXPECT_EQ((*child)->wait_for(2s), 7);
    EXPECT_EQ((*child)->exit_status(), 7);
    EXPECT_FALSE((*child)->running());
    EXPECT_EQ((*child)->stop(), 7);
    EXPECT_EQ(read_text(log), "out\nerr\nx\n" + dir.path().string() + "\n");

    SpawnOptions split;
    split.stdout_file = dir.path() / "out";
    split.stderr_file = dir.path() / "err";
    auto separate = Child::spawn({"sh", "-c", "echo out; echo err >&2"}, split);
    ASSERT_TRUE(separate) << separate.error().message;
    EXPECT_EQ((*separate)->wait_for(2s), 0);
    EXPECT_EQ(read_text(dir.path() / "out"), "out\n");
    EXPECT_EQ(read_text(dir.path() / "err"), "err\n");
}

TEST(Child, SpawnErrors) {
    auto missing = Child::spawn({"rig-no-such-program"});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().kind, rig::ErrorKind::infra);
    SpawnOptions unwritable;
    unwritable.stdout_file = "/nonexistent/dir/log";
    EXPECT_FALSE(Child::spawn({"true"}, unwritable));
}

TEST(Child, DestructorKillsAndReaps) {
    pid_t pid = -1;
    {
        auto child = Child::spawn({"sleep", "100"});
        ASSERT_TRUE(child) << child.error().message;
        pid = (*child)->pid();
    }
    // Reaped, not a zombie: the pid no longer exists at all.
    EXPECT_EQ(::kill(pid, 0), -1);
    EXPECT_EQ(errno, ESRCH);
}

TEST(Child, DiesWithItsParentEvenOnSigkill) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t helper = ::fork();
    ASSERT_GE(helper, 0);
    if (helper == 0) {
        // The helper stands in for rig: it spawns a child, reports its pid, then waits to
        // be killed. _exit keeps it from running the test's destructors.
        ::close(fds[0]);
        auto child = Child::spawn({"sleep", "100"});
        pid_t pid = child ? (*child)->pid() : -1;
        if (::write(fds[1], &pid, sizeof pid) != sizeof pid)
            ::_exit(1);
        for (;;)
            ::pause();
    }
    ::close(fds[1]);
    pid_t sleep_pid = -1;
    ssize_t got = ::read(fds[0], &sleep_pid, sizeof sleep_pid);
    ::close(fds[0]);
    ::kill(helper, SIGKILL);
    ::waitpid(helper, nullptr, 0);
    ASSERT_EQ(got, static_cast<ssize_t>(sizeof sleep_pid));
    ASSERT_GT(sleep_pid, 0);
    bool gone = gone_within(sleep_pid, 10s);
    if (!gone)
        ::kill(sleep_pid, SIGKILL); // do not leave it behind
    EXPECT_TRUE(gone);
}

namespace {

// A forked stand-in for rig: it runs `start` (which spawns a child), then waits to be
// killed. _exit keeps it from running the test's destructors.
pid_t fork_stand_in(const std::function<void()>& start) {
    pid_t helper = ::fork();
    if (helper == 0) {
        start();
        for (;;)
            ::pause();
    }
    return helper;
}

// Whether the watcher of `member`'s process group is in place: it names itself last, after
// joining the group and asking for its wakeup signal.
bool watcher_watches(pid_t member) {
    pid_t group = ::getpgid(member);
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        pid_t pid = static_cast<pid_t>(std::strtol(entry.path().filename().c_str(), nullptr, 10));
        if (pid > 0 && ::getpgid(pid) == group &&
            read_text(entry.path() / "comm") == "rig-watcher\n")
            return true;
    }
    return false;
}

// kill -9 of the stand-in, then whether `pid` (a grandchild of the stand-in) is gone in
// time; one that is not is killed, so that no test leaves it behind. The group's watcher
// joins it before the leader execs, so it is there already.
bool gone_after_killing(pid_t helper, pid_t pid, std::chrono::milliseconds limit) {
    EXPECT_TRUE(watcher_watches(pid));
    ::kill(helper, SIGKILL);
    ::waitpid(helper, nullptr, 0);
    bool gone = gone_within(pid, limit);
    if (!gone)
        ::kill(pid, SIGKILL);
    return gone;
}

} // namespace

// The watcher joins the group before the leader execs, so the program finds it there
// from its start: a kill of rig at any moment leaves nothing the program started running.
TEST(Run, TheProgramStartsWithItsWatcherInItsGroup) {
    auto result = must_run({"sh", "-c",
                            "g=$(cut -d' ' -f5 /proc/$$/stat); cat /proc/[0-9]*/stat 2>/dev/null |"
                            " awk -v g=\"$g\" '$2 == \"(rig-watcher)\" && $5 == g { n++ }"
                            " END { print n + 0 }'"},
                           limits(10s));
    EXPECT_EQ(result.out, "1\n");
}

// make's sub-makes and compilers are the leader's children: PR_SET_PDEATHSIG does not
// reach them, the group's watcher does.
TEST(Child, WholeGroupDiesWithItsParentEvenOnSigkill) {
    TempDir dir;
    auto pid_file = dir.path() / "pid";
    pid_t helper = fork_stand_in([&] {
        auto child = Child::spawn(
            {"sh", "-c", "sleep 100 & echo $! > \"$1\"; wait", "sh", pid_file.string()});
        if (!child)
            ::_exit(1);
        child->release(); // a killed rig runs no destructor either
    });
    ASSERT_GT(helper, 0);
    pid_t sleep_pid = read_pid(pid_file);
    ASSERT_GT(sleep_pid, 0);
    EXPECT_TRUE(gone_after_killing(helper, sleep_pid, 10s));
}

// SIGTERM first, so that make deletes the targets it was writing; then SIGKILL for what
// ignores it.
TEST(Run, GroupGetsSigtermThenSigkillWhenItsParentDies) {
    TempDir dir;
    auto pid_file = dir.path() / "pid";
    auto note = dir.path() / "note";
    pid_t helper = fork_stand_in([&] {
        (void)run(
            {"sh", "-c",
             "trap 'echo terminated > \"$2\"; exit 1' TERM; sleep 100 & echo $! > \"$1\"; wait",
             "sh", pid_file.string(), note.string()},
            limits(60s));
    });
    ASSERT_GT(helper, 0);
    pid_t sleep_pid = read_pid(pid_file);
    ASSERT_GT(sleep_pid, 0);
    EXPECT_TRUE(gone_after_killing(helper, sleep_pid, 10s));
    holds_within([&] { return !read_text(note).empty(); }, 10s);
    EXPECT_EQ(read_text(note), "terminated\n");

    auto stubborn_file = dir.path() / "stubborn";
    helper = fork_stand_in([&] {
        (void)run({"sh", "-c", "trap '' TERM; sleep 100 & echo $! > \"$1\"; wait", "sh",
                   stubborn_file.string()},
                  limits(60s));
    });
    ASSERT_GT(helper, 0);
    pid_t stubborn = read_pid(stubborn_file);
    ASSERT_GT(stubborn, 0);
    auto killed_at = Clock::now();
    EXPECT_TRUE(gone_after_killing(helper, stubborn, 15s));
    EXPECT_GE(Clock::now() - killed_at, 2s) << "SIGKILL came without the grace";
}

TEST(Cpu, ProcessSeconds) {
    auto before = cpu_seconds(::getpid());
    ASSERT_TRUE(before);
    EXPECT_GE(*before, 0.0);
    // Spin until the kernel has charged us at least one more tick.
    auto deadline = Clock::now() + 2s;
    volatile unsigned long sink = 0;
    std::optional<double> after = before;
    while (after && *after <= *before && Clock::now() < deadline) {
        for (int i = 0; i < 100000; ++i)
            sink = sink + static_cast<unsigned long>(i);
        after = cpu_seconds(::getpid());
    }
    ASSERT_TRUE(after);
    EXPECT_GT(*after, *before);
    EXPECT_FALSE(cpu_seconds(0));
    EXPECT_FALSE(cpu_seconds(0x7fffffff));
}

// Finer than a clock tick (10 ms): a child that spins for 2 ms of CPU reads more than 0
// and less than a tick's worth over it, however the ticks fell.
TEST(Cpu, ProcessSecondsAreFinerThanATick) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t child = ::fork();
    if (child == 0) {
        timespec start{}, now{};
        ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
        do
            ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
        while ((now.tv_sec - start.tv_sec) * 1'000'000'000L + (now.tv_nsec - start.tv_nsec) <
               2'000'000);
        char byte = 1;
        (void)::write(ready[1], &byte, 1);
        ::pause();
        ::_exit(0);
    }
    ASSERT_GT(child, 0);
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);
    auto seconds = cpu_seconds(child);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(ready[0]);
    ::close(ready[1]);
    ASSERT_TRUE(seconds);
    EXPECT_GE(*seconds, 0.002);
    EXPECT_LT(*seconds, 0.5);
    EXPECT_NE(*seconds * 100, std::floor(*seconds * 100)) << "whole ticks";
}

TEST(Cpu, HostSeconds) {
    auto first = host_cpu();
    ASSERT_TRUE(first);
    EXPECT_GT(first->total_seconds, 0.0);
    EXPECT_GE(first->busy_seconds, 0.0);
    EXPECT_LE(first->busy_seconds, first->total_seconds);
    std::this_thread::sleep_for(20ms);
    auto second = host_cpu();
    ASSERT_TRUE(second);
    EXPECT_GE(second->total_seconds, first->total_seconds);
    EXPECT_GE(second->busy_seconds, first->busy_seconds);
}

TEST(Cpu, HostSecondsOfSomeCpusOnly) {
    auto all = host_cpu();
    auto first = host_cpu({0});
    ASSERT_TRUE(all && first);
    EXPECT_GT(first->total_seconds, 0.0);
    EXPECT_LE(first->total_seconds, all->total_seconds);
    EXPECT_FALSE(host_cpu({100000})); // no such CPU
}

TEST(Spawn, AChildAndItsThreadsRunOnTheCpusAsked) {
    rig::proc::SpawnOptions options;
    options.cpus = {0};
    TempDir dir;
    options.stdout_file = dir.path() / "out";
    auto child = Child::spawn({"grep", "Cpus_allowed_list", "/proc/self/status"}, options);
    ASSERT_TRUE(child) << child.error().message;
    ASSERT_TRUE((*child)->wait_for(5s));
    EXPECT_EQ(rig::util::read_file(dir.path() / "out"), "Cpus_allowed_list:\t0\n");
    options.cpus = {100000};
    EXPECT_FALSE(Child::spawn({"true"}, options));
    // A CPU the mask can name but the machine lacks: the child's setup fails before exec,
    // in rig's memory (vfork), and the error still comes back.
    options.cpus = {CPU_SETSIZE - 1};
    auto absent = Child::spawn({"true"}, options);
    ASSERT_FALSE(absent);
    EXPECT_NE(absent.error().message.find(std::strerror(EINVAL)), std::string::npos)
        << absent.error().message;
}

TEST(Git, RunsWithAFixedLocaleAndNeitherEditorNorPagerWhateverTheCallerAsks) {
    rig::proc::RunOptions options;
    options.env = {{"GIT_EDITOR", "vi"}, {"LC_ALL", "de_DE.UTF-8"}, {"GIT_AUTHOR_NAME", "rig"}};
    auto editor = rig::proc::run_git({"var", "GIT_EDITOR"}, options);
    ASSERT_TRUE(editor) << editor.error().message;
    EXPECT_EQ(editor->out, "true\n");
    auto pager = rig::proc::run_git({"var", "GIT_PAGER"}, options);
    ASSERT_TRUE(pager) << pager.error().message;
    EXPECT_EQ(pager->out, "cat\n");
    // The caller's other entries pass through.
    auto author = rig::proc::run_git({"var", "GIT_AUTHOR_IDENT"}, options);
    ASSERT_TRUE(author) << author.error().message;
    EXPECT_EQ(author->out.rfind("rig <", 0), 0u) << author->out;
    EXPECT_EQ(rig::proc::git_environment().at("LC_ALL"), "C");
}

// What QEMU gets when rig runs as root (vm/qemu_user.hpp): another user, who reaches a
// file of rig's under a folder closed to it only through the bind, and /tmp of its own.
TEST(Child, RunsAsAnotherUserSeeingOnlyItsBinds) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "dropping to another user needs root (CI runs as root)";
    rig::test::TempDir dir;
    namespace fs = std::filesystem;
    fs::path closed = dir.path() / "closed";
    fs::create_directory(closed);
    fs::permissions(closed, fs::perms(0700));
    std::ofstream(closed / "kernel") << "bound";
    // Writable by anyone: only the read-only bind keeps the child from changing it.
    fs::permissions(closed / "kernel", fs::perms(0666));
    std::ofstream(dir.path() / "host-tmp-file") << "x";
    fs::path out = dir.path() / "out.txt";

    SpawnOptions options;
    options.stdout_file = out;
    options.confinement.user = Credentials{65534, 65534, {65534}};
    options.confinement.binds = {{closed / "kernel", "/tmp/kernel", true}};
    std::string script = "id -u; id -G; cat /tmp/kernel; echo; "
                         "cat " +
                         (closed / "kernel").string() +
                         " 2>/dev/null || echo closed; "
                         "ls /tmp; { echo more >> /tmp/kernel; } 2>/dev/null || echo read-only";
    auto child = Child::spawn({"/bin/sh", "-c", script}, options);
    ASSERT_TRUE(child) << child.error().message;
    ASSERT_EQ((*child)->wait_for(std::chrono::seconds(10)), 0);
    EXPECT_EQ(rig::util::read_file(out), "65534\n65534\nbound\nclosed\nkernel\nread-only\n");
    EXPECT_EQ(rig::util::read_file(closed / "kernel"), "bound");
    // The namespace was the child's alone: the host's /tmp is as it was.
    EXPECT_TRUE(fs::exists(dir.path() / "host-tmp-file"));
}

// /proc/self/net/dev: two header lines, then one per device the child's network
// namespace has. A confined child has the loopback alone.
size_t network_devices(const RunOptions& options) {
    auto result = run({"cat", "/proc/self/net/dev"}, options);
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    if (!result || result->exit_code != 0)
        return 0;
    size_t lines = static_cast<size_t>(std::count(result->out.begin(), result->out.end(), '\n'));
    return lines - 2;
}

TEST(Run, NoNetworkLeavesTheChildALoopbackAloneWhetherRigIsRootOrNot) {
    RunOptions options;
    options.confinement.no_network = true;
    EXPECT_EQ(network_devices(options), 1u);
    if (::geteuid() != 0)
        return;
    // As a normal user: a user namespace of its own first (the path rig takes when it is
    // not root), in a forked copy of this test that gives up root.
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // Dumpable again after the change of user, as a process started by a normal user
        // is: its /proc/self files are then its own to write its maps into.
        if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0 ||
            ::prctl(PR_SET_DUMPABLE, 1) != 0)
            ::_exit(2);
        auto result = run({"sh", "-c", "id -u; tail -n +3 /proc/self/net/dev | wc -l"}, options);
        ::_exit(result && result->exit_code == 0 && result->out == "65534\n1\n" ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(Run, AWritableBindRootIsATmpTheUserMayWriteTo) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "dropping to another user needs root (CI runs as root)";
    RunOptions options;
    options.confinement.user = Credentials{65534, 65534, {}};
    options.confinement.binds = {{"/etc/hostname", "/tmp/hostname", true}};
    auto small = run({"sh", "-c", "echo x > /tmp/mine && echo wrote"}, options);
    ASSERT_TRUE(small) << small.error().message;
    EXPECT_EQ(small->out, "");
    options.confinement.writable_bind_root = true;
    auto writable = run({"sh", "-c", "echo x > /tmp/mine && echo wrote"}, options);
    ASSERT_TRUE(writable) << writable.error().message;
    EXPECT_EQ(writable->out, "wrote\n");
}

TEST(Child, BindsNeedAUserAndATargetInTheBindRoot) {
    SpawnOptions options;
    options.confinement.binds = {{"/etc/hostname", "/tmp/hostname", true}};
    auto without_user = Child::spawn({"true"}, options);
    ASSERT_FALSE(without_user);
    EXPECT_NE(without_user.error().message.find("need a user"), std::string::npos);
    options.confinement.user = Credentials{65534, 65534, {}};
    options.confinement.binds = {{"/etc/hostname", "/var/tmp/hostname", true}};
    auto elsewhere = Child::spawn({"true"}, options);
    ASSERT_FALSE(elsewhere);
    EXPECT_NE(elsewhere.error().message.find("is not in /tmp"), std::string::npos);
}

// A remote helper such as ext:: runs a command of the URL's choosing. git itself refuses it
// through GIT_ALLOW_PROTOCOL, even where the configuration (here, -c) allows it.
TEST(Git, RefusesTransportsOutsideTheAllowListWhateverTheConfigurationSays) {
    TempDir dir;
    const std::filesystem::path marker = dir.path() / "ran";
    rig::proc::RunOptions options;
    options.cwd = dir.path();
    auto result = rig::proc::run_git(
        {"-c", "protocol.ext.allow=always", "ls-remote", "ext::sh -c touch% " + marker.string()},
        options);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_NE(result->exit_code, 0);
    EXPECT_NE(result->err.find("transport 'ext' not allowed"), std::string::npos) << result->err;
    EXPECT_FALSE(std::filesystem::exists(marker));
    // A repository's path is the file transport, which stays allowed.
    auto init = rig::proc::run_git({"init", "-q", (dir.path() / "repo").string()}, options);
    ASSERT_TRUE(init && init->exit_code == 0);
    auto local = rig::proc::run_git({"ls-remote", "--", (dir.path() / "repo").string()}, options);
    ASSERT_TRUE(local) << local.error().message;
    EXPECT_EQ(local->exit_code, 0) << local->err;
}

TEST(Git, OptionLikeOperandsAreRefused) {
    auto short_option = rig::proc::check_git_operand("-ufoo", "git ref");
    ASSERT_FALSE(short_option);
    EXPECT_EQ(short_option.error().kind, rig::ErrorKind::config);
    EXPECT_EQ(short_option.error().message,
              "git ref '-ufoo' starts with '-', which git would read as an option");
    EXPECT_FALSE(rig::proc::check_git_operand("--upload-pack=touch x", "kernel repository"));
    EXPECT_FALSE(rig::proc::check_git_operand("", "git ref"));
    EXPECT_TRUE(rig::proc::check_git_operand("v6.1-rc1", "git ref"));
    EXPECT_TRUE(rig::proc::check_git_operand("/src/linux", "kernel repository"));
}
