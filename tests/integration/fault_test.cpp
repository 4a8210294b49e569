// SPDX-License-Identifier: MIT
// Faults around `rig run` and `rig kernel build`: a results folder that fills up, a
// database another process keeps locked, QEMU or virtiofsd missing, kill -9 during a git
// kernel build, and kill -9 at random moments of a run that is resumed each time. In each
// case rig exits with its documented code and says what to do, leaves no process behind
// and no partial row, and the database passes SQLite's integrity check.
#include "linux_repo.hpp"
#include "rig_binary.hpp"
#include "scratch.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <sched.h>
#include <set>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using rig::test::doctor_line;
using rig::test::one;
using rig::test::processes_mentioning;
using rig::test::query;
using rig::test::read_text;
using rig::test::run_rig;

namespace {

constexpr auto k_run_timeout = std::chrono::minutes(15);
constexpr auto k_build_timeout = std::chrono::minutes(60);
// README "Exit codes".
constexpr int k_exit_infra = 3;

struct Scratch : rig::test::Scratch {
    explicit Scratch(const std::string& name) : rig::test::Scratch(name, "test-faults") {}
};

// Where Scratch(name) puts its folder, for what must happen before the folder is emptied.
fs::path scratch_dir(const std::string& name) {
    const char* root = std::getenv("RIG_BUILD_ROOT");
    return fs::path(root ? root : "/tmp") / "test-faults" / name;
}

std::string scenario(const std::string& name) {
    return "tests/data/faults/" + name + ".yaml";
}

// True when no process mentions `needle` within a few seconds: once rig is gone, what it
// started gets SIGTERM, and SIGKILL 3 s later.
bool none_left(const std::string& needle) {
    for (int i = 0; i < 80 && !processes_mentioning(needle).empty(); ++i)
        std::this_thread::sleep_for(100ms);
    return processes_mentioning(needle).empty();
}

// What every case checks at its end.
void expect_consistent(const fs::path& db) {
    EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
    // A stored sample is whole: stored once, with an outcome.
    EXPECT_EQ(one(db, "SELECT count(*) - count(DISTINCT run_id || '/' || cell_id || '/' || "
                      "repetition) FROM samples"),
              "0");
    EXPECT_EQ(one(db, "SELECT count(*) FROM samples WHERE outcome IS NULL OR outcome = ''"), "0");
}

// rig's exit code once it exits by itself within `limit`; -1 when it did not (it is then
// killed).
int wait_for_exit(pid_t rig, std::chrono::minutes limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        if (::waitpid(rig, &status, WNOHANG) == rig)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        std::this_thread::sleep_for(200ms);
    }
    ::kill(rig, SIGKILL);
    ::waitpid(rig, nullptr, 0);
    return -1;
}

// Polls `ready` often: a fault is injected the moment rig reaches a state.
bool wait_for(pid_t rig, std::chrono::milliseconds limit, const std::function<bool()>& ready) {
    return rig::test::wait_while_running(rig, limit, ready, 100ms);
}

// Lets rig run for `delay`, or until `enough` holds; false when it exited before.
bool runs_for(pid_t rig, std::chrono::milliseconds delay, const std::function<bool()>& enough) {
    auto until = std::chrono::steady_clock::now() + delay;
    while (std::chrono::steady_clock::now() < until && !enough()) {
        if (::waitpid(rig, nullptr, WNOHANG) == rig)
            return false;
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
            50ms, until - std::chrono::steady_clock::now()));
    }
    return true;
}

// The rows of `table`; 0 while rig is still creating the database, for polling.
size_t count(const fs::path& db, const std::string& table) {
    sqlite3* handle = nullptr;
    sqlite3_stmt* statement = nullptr;
    size_t rows = 0;
    const std::string sql = "SELECT count(*) FROM " + table;
    if (fs::exists(db) &&
        sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
        sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW)
        rows = static_cast<size_t>(sqlite3_column_int64(statement, 0));
    sqlite3_finalize(statement);
    sqlite3_close(handle);
    return rows;
}

// A tmpfs of `size` at `dir`, for one test. A mount left by a crashed earlier run is
// detached first, so that the scratch folder can be removed.
class Tmpfs final {
public:
    static void detach(const fs::path& dir) {
        rig::proc::RunOptions options;
        options.timeout = 30s;
        (void)rig::proc::run({"umount", "--lazy", dir.string()}, options);
    }
    Tmpfs(const fs::path& dir, const std::string& size) : m_dir(dir) {
        fs::create_directories(dir);
        rig::test::must_run({"mount", "-t", "tmpfs", "-o", "size=" + size, "rig-faults", dir});
    }
    ~Tmpfs() { detach(m_dir); }
    Tmpfs(const Tmpfs&) = delete;
    Tmpfs& operator=(const Tmpfs&) = delete;

private:
    fs::path m_dir;
};

// Writes zeros to `file` until its filesystem is full; the bytes written.
uint64_t fill(const fs::path& file) {
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    std::vector<char> chunk(1 << 20, 0);
    uint64_t written = 0;
    ssize_t count;
    while (fd >= 0 && (count = ::write(fd, chunk.data(), chunk.size())) > 0)
        written += static_cast<uint64_t>(count);
    if (fd >= 0)
        ::close(fd);
    return written;
}

} // namespace

// The results folder (the database's folder) is a small tmpfs that another writer fills
// while the second sample's guest runs. That sample is infra-error, rig stops with exit
// 3 and says what to do; once space is freed, a resume finishes the run.
TEST(Faults, AFullResultsFolderStopsTheRunAndAResumeFinishesIt) {
    Tmpfs::detach(scratch_dir("full-disk") / "results");
    Scratch scratch("full-disk");
    const fs::path results = scratch.dir / "results";
    Tmpfs tmpfs(results, "64m");
    const fs::path db = results / "rig.db";
    pid_t rig = rig::test::start_rig_logged({"--db", db.string(), "run", scenario("three")},
                                            scratch.dir / "rig.log");
    ASSERT_TRUE(wait_for(rig, 10min, [&] {
        return count(db, "samples") == 1 &&
               !processes_mentioning((results / "runs").string()).empty();
    })) << read_text(scratch.dir / "rig.log");
    uint64_t filled = fill(results / "filler");
    std::cout << "[ measured ] filled the results folder with " << (filled >> 20)
              << " MiB while the second guest ran\n";

    int exit_code = wait_for_exit(rig, 5min);
    std::string log = read_text(scratch.dir / "rig.log");
    EXPECT_EQ(exit_code, k_exit_infra) << log;
    EXPECT_NE(log.find("ran out of space during the sample"), std::string::npos) << log;
    EXPECT_NE(log.find("the sample is stored as infra-error"), std::string::npos) << log;
    EXPECT_NE(log.find("Free space there"), std::string::npos) << log;
    EXPECT_NE(log.find("rig run --resume 1"), std::string::npos) << log;
    EXPECT_TRUE(none_left(results.string()));
    EXPECT_EQ(query(db, "SELECT outcome FROM samples ORDER BY id"),
              (std::vector<std::string>{"ok", "infra-error"}));
    EXPECT_NE(one(db, "SELECT evidence FROM samples WHERE outcome = 'infra-error'")
                  .find("ran out of space"),
              std::string::npos);
    expect_consistent(db);

    fs::remove(results / "filler");
    auto resumed = run_rig({"--db", db.string(), "run", "--resume"}, k_run_timeout);
    EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_EQ(query(db, "SELECT outcome FROM samples ORDER BY id"),
              (std::vector<std::string>{"ok", "infra-error", "ok"}));
    EXPECT_EQ(one(db, "SELECT status FROM runs"), "finished");
    EXPECT_TRUE(none_left(results.string()));
    expect_consistent(db);
}

// Another process holds the database's write lock (BEGIN EXCLUSIVE, as a sqlite3 shell
// in a transaction would) far longer than SQLite's busy timeout, while a sample runs.
// rig says who holds it and waits; once the lock goes, the run ends with every sample
// stored once.
TEST(Faults, ALockedDatabaseIsWaitedForAndTheRunEndsWhole) {
    Scratch scratch("locked-db");
    pid_t rig = rig::test::start_rig_logged({"--db", scratch.db.string(), "run", scenario("three")},
                                            scratch.dir / "rig.log");
    ASSERT_TRUE(wait_for(rig, 10min, [&] { return count(scratch.db, "samples") == 1; }))
        << read_text(scratch.dir / "rig.log");

    sqlite3* holder = nullptr;
    ASSERT_EQ(sqlite3_open(scratch.db.c_str(), &holder), SQLITE_OK);
    sqlite3_busy_timeout(holder, 60'000); // rig may be writing this very moment
    ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(holder);
    auto locked_at = std::chrono::steady_clock::now();
    const std::string notice = "rig.db: process " + std::to_string(::getpid()) + " (" +
                               std::string(rig::util::trim(read_text("/proc/self/comm"))) +
                               ") has held its write lock for";
    bool noticed = wait_for(rig, 5min, [&] {
        return read_text(scratch.dir / "rig.log").find(notice) != std::string::npos;
    });
    // Still waiting, well past the notice: rig neither gave up nor wrote around the lock.
    std::this_thread::sleep_for(5s);
    size_t samples_while_locked = count(scratch.db, "samples");
    double held =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - locked_at).count();
    sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
    std::cout << "[ measured ] held the write lock for " << held << " s\n";

    int exit_code = wait_for_exit(rig, 10min);
    std::string log = read_text(scratch.dir / "rig.log");
    EXPECT_TRUE(noticed) << log;
    EXPECT_NE(log.find("waiting until it lets go"), std::string::npos) << log;
    EXPECT_EQ(samples_while_locked, 1u);
    // Every sample stored with what its guest did. Under TCG a guest has once hung at boot
    // (a lost timer interrupt: "rcu_preempt kthread timer wakeup didn't happen"), a
    // boot-timeout rig recorded as it should: the guests are not what this case is about.
    auto outcomes = query(scratch.db, "SELECT outcome FROM samples ORDER BY id");
    EXPECT_EQ(outcomes.size(), 3u);
    for (const std::string& outcome : outcomes)
        EXPECT_TRUE(outcome != "infra-error" && outcome != "aborted") << outcome << "\n" << log;
    const bool all_ok = std::count(outcomes.begin(), outcomes.end(), "ok") == 3;
    EXPECT_EQ(exit_code, all_ok ? 0 : 1) << log;
    EXPECT_EQ(one(scratch.db, "SELECT status FROM runs"), "finished");
    EXPECT_TRUE(none_left(scratch.dir.string()));
    expect_consistent(scratch.db);
}

namespace {

// What a run of rig is denied: programs left out of its PATH, and files hidden from it
// (an empty, non-executable file mounted over each, in a mount namespace of its own) for
// programs rig looks for at fixed places, as it does for virtiofsd.
struct Denied {
    std::set<std::string> programs;
    std::vector<fs::path> files;
};

// A folder of links to every program of the test's PATH but the denied ones.
fs::path path_without(const fs::path& dir, const std::set<std::string>& programs) {
    fs::create_directories(dir);
    std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    std::set<std::string> linked;
    std::error_code ec;
    for (const std::string& folder : rig::util::split(path, ':')) {
        if (folder.empty() || !fs::is_directory(folder, ec))
            continue;
        for (const auto& entry : fs::directory_iterator(folder, ec)) {
            std::string name = entry.path().filename().string();
            if (programs.count(name) || !linked.insert(name).second)
                continue;
            fs::create_symlink(entry.path(), dir / name, ec);
        }
    }
    return dir;
}

// Runs rig with what `denied` takes away; its exit code and its combined output.
std::pair<int, std::string> run_rig_denied(std::vector<std::string> args, const Denied& denied,
                                           const fs::path& scratch) {
    static int runs = 0;
    const std::string name = "denied-" + std::to_string(++runs);
    const fs::path log = scratch / (name + ".log");
    const fs::path path = path_without(scratch / (name + "-path"), denied.programs);
    const fs::path empty = scratch / "empty";
    std::ofstream(empty).close();
    std::vector<std::string> hidden;
    for (const fs::path& file : denied.files)
        if (fs::exists(file))
            hidden.push_back(file.string());
    const char* binary = std::getenv("RIG_BINARY");
    args.insert(args.begin(), binary ? binary : "rig");
    std::vector<char*> argv;
    for (auto& arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::string root = rig::test::source_root().string();
    std::string path_value = path.string();
    pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (!hidden.empty() && (::unshare(CLONE_NEWNS) != 0 ||
                                ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0))
            ::_exit(126);
        for (const std::string& file : hidden)
            if (::mount(empty.c_str(), file.c_str(), nullptr, MS_BIND, nullptr) != 0)
                ::_exit(126);
        int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || ::chdir(root.c_str()) != 0 || ::setenv("PATH", path_value.c_str(), 1) != 0)
            ::_exit(127);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int exit_code = wait_for_exit(pid, std::chrono::minutes(2));
    return {exit_code, read_text(log)};
}

} // namespace

// Without QEMU in PATH, `rig run` refuses before it stores a run or boots a guest, names
// the program and where to look; `rig doctor` agrees. The same for virtiofsd, which rig
// also looks for at fixed places, with a scenario that has a virtiofs cell.
TEST(Faults, MissingQemuOrVirtiofsdIsOneClearErrorBeforeAnySample) {
    Scratch scratch("missing-programs");
    Denied no_qemu{{"qemu-system-x86_64"}, {}};
    auto [run_code, run_out] = run_rig_denied(
        {"--db", scratch.db.string(), "run", scenario("three")}, no_qemu, scratch.dir);
    EXPECT_EQ(run_code, k_exit_infra) << run_out;
    EXPECT_NE(run_out.find("rig: qemu-system-x86_64 not found in PATH: install qemu-system-x86"),
              std::string::npos)
        << run_out;
    EXPECT_NE(run_out.find("rig doctor"), std::string::npos) << run_out;
    EXPECT_EQ(count(scratch.db, "runs"), 0u) << "no run is stored that could not start";
    auto [doctor_code, doctor_out] =
        run_rig_denied({"--db", scratch.db.string(), "doctor"}, no_qemu, scratch.dir);
    EXPECT_EQ(doctor_code, k_exit_infra) << doctor_out;
    std::string qemu = doctor_line(doctor_out, "qemu");
    EXPECT_NE(qemu.find("MISSING"), std::string::npos) << doctor_out;
    EXPECT_NE(qemu.find("qemu-system-x86_64 not found in PATH"), std::string::npos) << doctor_out;

    Denied no_virtiofsd{{"virtiofsd"}, {}};
    for (const char* file : {"/usr/libexec/virtiofsd", "/usr/lib/qemu/virtiofsd"})
        no_virtiofsd.files.emplace_back(file);
    auto [virtiofs_code, virtiofs_out] = run_rig_denied(
        {"--db", scratch.db.string(), "run", scenario("virtiofs")}, no_virtiofsd, scratch.dir);
    EXPECT_EQ(virtiofs_code, k_exit_infra) << virtiofs_out;
    EXPECT_NE(virtiofs_out.find("rig: virtiofsd not found (looked at /usr/libexec/virtiofsd, "
                                "/usr/lib/qemu/virtiofsd, then PATH)"),
              std::string::npos)
        << virtiofs_out;
    EXPECT_NE(virtiofs_out.find("install qemu-system-common"), std::string::npos) << virtiofs_out;
    EXPECT_EQ(count(scratch.db, "runs"), 0u);
    auto [doctor2_code, doctor2_out] =
        run_rig_denied({"--db", scratch.db.string(), "doctor"}, no_virtiofsd, scratch.dir);
    EXPECT_EQ(doctor2_code, k_exit_infra) << doctor2_out;
    std::string virtiofsd = doctor_line(doctor2_out, "virtiofsd");
    EXPECT_NE(virtiofsd.find("MISSING"), std::string::npos) << doctor2_out;
    EXPECT_NE(virtiofsd.find("not found"), std::string::npos) << doctor2_out;
    EXPECT_EQ(doctor_line(doctor2_out, "qemu").find("MISSING"), std::string::npos) << doctor2_out;
    EXPECT_TRUE(none_left(scratch.dir.string()));
    expect_consistent(scratch.db);
}

namespace {

// A process as it was seen: alive() is false once it has exited, even if its number has
// been given to another process since, or while it waits as a zombie to be reaped.
struct Running {
    int pid = 0;
    std::string start; // /proc/PID/stat's starttime
    std::string command;

    static std::optional<std::string> start_time(int pid) {
        std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
        size_t name_end = stat.rfind(')');
        if (name_end == std::string::npos)
            return std::nullopt;
        // After the name: state (field 3), ..., starttime (field 22).
        auto fields = rig::util::split(stat.substr(name_end + 2), ' ');
        if (fields.size() < 20 || fields[0] == "Z")
            return std::nullopt;
        return fields[19];
    }
    static std::optional<Running> of(int pid) {
        auto start = start_time(pid);
        if (!start)
            return std::nullopt;
        std::string command = read_text("/proc/" + std::to_string(pid) + "/cmdline");
        std::replace(command.begin(), command.end(), '\0', ' ');
        return Running{pid, *start, command};
    }
    bool alive() const { return start_time(pid) == start; }
};

// A process's network namespace, as /proc names it ("net:[4026531840]").
std::string network_of(int pid) {
    std::error_code ec;
    return fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", ec).string();
}

// A commit on top of the shared repository's base that touches three fs/9p files, new at
// each run, so that it is built each time (incrementally, in the kernels suite's folder).
std::string three_file_commit(const fs::path& repo) {
    std::string stamp = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
    std::string commit = rig::test::k_linux_base_tag;
    for (const char* file : {"fs/9p/v9fs.c", "fs/9p/vfs_super.c", "fs/9p/vfs_dir.c"})
        commit = rig::test::commit_file(
            repo, commit, file,
            rig::test::file_at(repo, rig::test::k_linux_base_tag, file) + "\nint rig_fault_" +
                stamp + "_" + fs::path(file).stem().string() + "(void);\n",
            std::string("9p: touch ") + file, "faults");
    return commit;
}

} // namespace

// kill -9 of rig while make compiles: make, its sub-makes and the compilers die with it
// (none is left working in the build folder), nothing is recorded for the killed build,
// and the next `rig kernel build` builds the commit in the same folder, incrementally.
TEST(Faults, KillDuringAKernelBuildLeavesNoMakeAndTheRerunBuilds) {
    Scratch scratch("killed-build");
    fs::path repo = rig::test::linux_repo();
    std::string commit = three_file_commit(repo);
    fs::path file = scratch.dir / "killed-build.yaml";
    std::ofstream(file) << "name: faults-killed-build\nkernels:\n  - {name: v6.1, git: "
                        << repo.string() << ", ref: " << commit
                        << ", config: [base, release]}\nmatrix: {fs: [9p], cache: [loose]}\n"
                           "workload: {command: \"echo done\"}\n";
    const fs::path cache = fs::absolute(std::getenv("RIG_CACHE"));
    pid_t rig = rig::test::start_rig_logged(
        {"--db", scratch.db.string(), "kernel", "build", file.string()}, scratch.dir / "build.log");
    // The long make, once it compiles: its log names each object as it starts it. Started
    // as root, rig runs it as rig-qemu, seeing its build folder at /tmp/out.
    const bool root = ::geteuid() == 0;
    const long build_uid = root ? rig::test::account_uid("rig-qemu") : ::geteuid();
    const std::string out_seen = rig::test::make_out_argument();
    ASSERT_TRUE(wait_for(rig, 30min, [&] {
        bool making = false;
        for (int pid : processes_mentioning(out_seen)) {
            auto args =
                rig::util::split(read_text("/proc/" + std::to_string(pid) + "/cmdline"), '\0');
            making = making || std::find(args.begin(), args.end(), "vmlinux") != args.end();
        }
        if (!making)
            return false;
        std::error_code ec;
        for (const auto& log : fs::directory_iterator(cache / "git" / "logs", ec))
            if (log.path().string().find(commit.substr(0, 12)) != std::string::npos &&
                log.path().extension() == ".make" &&
                read_text(log.path()).find("  CC ") != std::string::npos)
                return true;
        return false;
    })) << read_text(scratch.dir / "build.log");
    // What works in the build now: make, its sub-makes, the compilers, all as the build's
    // user and without the host's network. Another suite's build could take the folder
    // once rig is gone, so these are what must go.
    std::vector<Running> building;
    for (int pid :
         root ? rig::test::processes_of_user(build_uid, true) : processes_mentioning(out_seen))
        if (auto running = Running::of(pid))
            building.push_back(*running);
    ASSERT_FALSE(building.empty());
    for (const Running& process : building)
        EXPECT_NE(network_of(process.pid), network_of(::getpid())) << process.command;
    ::kill(rig, SIGKILL);
    ::waitpid(rig, nullptr, 0);
    auto killed_at = std::chrono::steady_clock::now();
    auto alive = [&] {
        std::vector<Running> left;
        for (const Running& process : building)
            if (process.alive())
                left.push_back(process);
        return left;
    };
    while (!alive().empty() && std::chrono::steady_clock::now() - killed_at < 8s)
        std::this_thread::sleep_for(100ms);
    for (const Running& process : alive()) {
        ADD_FAILURE() << "left behind by kill -9 of rig: " << process.command;
        ::kill(process.pid, SIGKILL);
    }
    std::cout << "[ measured ] kill -9 during make: " << building.size()
              << " processes in the build folder, all gone after "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count()
              << " s\n";
    EXPECT_EQ(count(scratch.db, "kernel_builds"), 0u);
    EXPECT_EQ(count(scratch.db, "kernel_artifacts"), 0u);

    auto rerun =
        run_rig({"--db", scratch.db.string(), "kernel", "build", file.string()}, k_build_timeout);
    EXPECT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
    EXPECT_EQ(rerun.out.find("cache hit"), std::string::npos)
        << "the killed build left an artifact behind: " << rerun.out;
    auto row = one(scratch.db, "SELECT outcome, \"commit\", log_path FROM kernel_builds");
    EXPECT_EQ(row.substr(0, row.find('\t')), "ok") << row;
    EXPECT_NE(row.find(commit), std::string::npos) << row;
    std::smatch match;
    std::string build_log = read_text(row.substr(row.rfind('\t') + 1));
    static const std::regex k_objects("rig: make exited 0, ([0-9]+) objects");
    ASSERT_TRUE(std::regex_search(build_log, match, k_objects)) << build_log;
    std::cout << "[ measured ] rebuild after kill -9 during make: " << match[1] << " objects\n";
    EXPECT_LT(std::stol(match[1]), 200) << "the folder was not usable for an incremental build";
    EXPECT_EQ(one(scratch.db,
                  "SELECT count(*) FROM kernel_artifacts WHERE \"commit\" = '" + commit + "'"),
              "1");
    expect_consistent(scratch.db);
}

// kill -9 at random moments of a six-sample run, at least ten times, each followed by
// `rig run --resume`: at the end every sample is there exactly once, nothing is left
// running after any kill, and the database is whole.
// The kill campaign: SIGKILL at random moments of a run of two guests at once, resumed
// each time. RIG_KILLS sets how many (10 in CI; the README says what 30 of them showed,
// with the bisect's and the watch's).
TEST(Faults, RepeatedKillsAndResumesStoreEverySampleOnce) {
    Scratch scratch("kill-resume");
    const char* kills_wanted = std::getenv("RIG_KILLS");
    const int k_kills = kills_wanted ? std::max(1, std::atoi(kills_wanted)) : 10;
    constexpr size_t k_samples = 6;
    // Seeded from the clock and printed, so that a failing sequence can be told apart.
    const unsigned seed =
        static_cast<unsigned>(std::chrono::system_clock::now().time_since_epoch().count());
    std::mt19937 random(seed);
    auto started = std::chrono::steady_clock::now();
    int kills = 0, resumes = 0, orphans = 0, shown_running = 0;
    bool run_finished = false;
    std::vector<std::string> first{"--db", scratch.db.string(), "run", "--jobs",
                                   "2",    scenario("six")};
    std::vector<std::string> resume{"--db", scratch.db.string(), "run", "--jobs", "2", "--resume"};
    while (kills < k_kills) {
        bool fresh = kills == 0;
        fs::path log = scratch.dir / ("life-" + std::to_string(kills) + ".log");
        pid_t rig = rig::test::start_rig_logged(fresh ? first : resume, log);
        resumes += fresh ? 0 : 1;
        // The first kill waits for the run's row, so that there is a run to resume.
        if (fresh) {
            ASSERT_TRUE(wait_for(rig, 10min, [&] { return count(scratch.db, "runs") == 1; }))
                << read_text(log);
        }
        // Up to two samples' time, in samples of this machine (a guess of TCG's before the
        // first is stored). A life stores at most two samples and leaves the last one to
        // lives of a third of a sample each, so that ten kills land before the run ends.
        const size_t stored = count(scratch.db, "samples");
        const double sample_seconds =
            stored == 0 ? 8.0
                        : std::stod(one(scratch.db, "SELECT avg(total_seconds) FROM samples"));
        // Two guests at once: the last two samples may end together.
        const bool last = stored + 2 >= k_samples;
        const size_t enough = std::min(stored + 2, k_samples - 1);
        std::uniform_int_distribution<int> delay_ms(
            200, static_cast<int>(sample_seconds * (last ? 1000.0 / 3 : 2000.0)));
        const bool ran = runs_for(rig, std::chrono::milliseconds(delay_ms(random)),
                                  [&] { return !last && count(scratch.db, "samples") >= enough; });
        // A machine that got faster (the suites beside this one ended) may finish the run
        // before a kill lands: the campaign ends there, with what it killed so far.
        if (!ran && one(scratch.db, "SELECT status FROM runs") == "finished") {
            run_finished = true;
            std::cout << "[ measured ] the run finished before kill " << kills + 1 << "\n";
            break;
        }
        ASSERT_TRUE(ran) << "rig ended by itself before kill " << kills + 1 << ": "
                         << read_text(log);
        bool clean = rig::test::kill_leaves_no_process(rig, scratch.dir.string());
        ++kills;
        // Read-only, whoever killed it: the run reads as interrupted, never running.
        auto report = run_rig({"--db", scratch.db.string(), "report"});
        if (report.out.find("(interrupted") == std::string::npos)
            ++shown_running;
        if (!clean) {
            orphans += static_cast<int>(processes_mentioning(scratch.dir.string()).size());
            for (int pid : processes_mentioning(scratch.dir.string()))
                ::kill(pid, SIGKILL);
        }
    }
    rig::proc::RunResult finished{0, 0, false, "", ""};
    if (!run_finished) {
        finished = run_rig(resume, k_run_timeout);
        ++resumes;
    }
    EXPECT_GE(kills, std::min(k_kills, 3)) << "too few kills landed before the run ended";
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    size_t samples = count(scratch.db, "samples");
    std::cout << "[ measured ] repeated kill -9: " << kills << " kills, " << resumes << " resumes, "
              << samples << " samples, " << orphans << " orphans, " << shown_running
              << " reports not saying interrupted, " << seconds << " s (seed " << seed << ")\n";
    EXPECT_EQ(finished.exit_code, 0) << finished.out << finished.err;
    EXPECT_EQ(orphans, 0);
    EXPECT_EQ(shown_running, 0);
    EXPECT_EQ(one(scratch.db, "SELECT count(*), count(DISTINCT cell_id || '/' || repetition), "
                              "sum(outcome = 'ok') FROM samples"),
              "6\t6\t6");
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM cells"), "3");
    EXPECT_EQ(one(scratch.db, "SELECT count(*), min(status) FROM runs"), "1\tfinished");
    EXPECT_TRUE(none_left(scratch.dir.string()));
    expect_consistent(scratch.db);
}
