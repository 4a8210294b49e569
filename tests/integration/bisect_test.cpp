// SPDX-License-Identifier: MIT
// rig bisect on a real kernel history made by the test on top of linux-source-6.1: a
// planted 9p open error under cache=mmap whose line changes from run to run (a random
// third of read-only opens fail with EBADF), behind a range of commits that do not build
// (killed with -9 half-way and resumed), endpoints that do not reproduce, and a planted
// slowdown in 9p's open found with the duration criterion, a commit halfway between
// the endpoints that ends the bisect as a range, and a planted caching regression (loose
// mode no longer answering stat from its cache) found on a 9p request count with one
// sample per commit, across a kill -9; and the same regression as the second patch of a
// posted series (an mbox with a cover letter): measured without and with it, bisected over
// its patches, and replied to. Builds are incremental in the [base, release]
// folder the kernels suite shares through RIG_CACHE.
#include "linux_repo.hpp"
#include "rig_binary.hpp"
#include "scratch.hpp"
#include "slurm_cluster.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using rig::test::commit_files;
using rig::test::one;
using rig::test::processes_mentioning;
using rig::test::query;
using rig::test::replace_once;
using rig::test::run_rig;

namespace {

constexpr auto k_bisect_timeout = std::chrono::minutes(120);

struct Scratch : rig::test::Scratch {
    explicit Scratch(const std::string& name) : rig::test::Scratch(name, "test-bisects") {}
};

// (a) base, a harmless commit, two commits that do not compile, the fix, the planted open
// error (cache=mmap only; a random third of read-only opens, so the failing file and line
// change from run to run), two harmless commits. In a linear range of 7, git tests the
// third commit first: the broken range is met for sure.
struct FunctionalHistory {
    std::string good, broken1, broken2, parent, culprit, bad;
};

const FunctionalHistory& functional_history() {
    static FunctionalHistory history = [] {
        fs::path repo = rig::test::linux_repo();
        const std::string base = rig::test::k_linux_base_tag;
        auto at = [&](const std::string& path) { return rig::test::file_at(repo, base, path); };
        FunctionalHistory h;
        h.good = rig::test::must_run({"git", "rev-parse", base + "^{commit}"}, repo);
        std::string c1 = commit_files(
            repo, h.good, {{"fs/9p/v9fs.c", at("fs/9p/v9fs.c") + "\n/* rig bisect test: c1 */\n"}},
            "9p: note the session setup", 1);
        std::string addr = at("fs/9p/vfs_addr.c");
        h.broken1 = commit_files(
            repo, c1, {{"fs/9p/vfs_addr.c", addr + "\nint rig_half_done(void) { return 0 }\n"}},
            "9p: start a helper (does not build)", 2);
        h.broken2 = commit_files(
            repo, h.broken1,
            {{"fs/9p/vfs_addr.c", addr + "\nint rig_half_done(void) { return undeclared; }\n"}},
            "9p: continue the helper (still does not build)", 3);
        h.parent = commit_files(
            repo, h.broken2,
            {{"fs/9p/vfs_addr.c", addr + "\nint rig_half_done(void);\nint rig_half_done(void) "
                                         "{ return 0; }\n"}},
            "9p: finish the helper (builds again)", 4);
        // Seed 004's kind: under cache=mmap one read-only open of a regular file in three
        // fails with EBADF, at random, so each run fails on other files.
        std::string planted = replace_once(at("fs/9p/vfs_file.c"), "#include <linux/uio.h>\n",
                                           "#include <linux/uio.h>\n#include <linux/random.h>\n");
        planted = replace_once(planted,
                               "\tv9inode = V9FS_I(inode);\n\tv9ses = v9fs_inode2v9ses(inode);\n",
                               "\tv9inode = V9FS_I(inode);\n\tv9ses = v9fs_inode2v9ses(inode);\n"
                               "\tif (v9ses->cache == CACHE_MMAP && S_ISREG(inode->i_mode) &&\n"
                               "\t    (file->f_flags & O_ACCMODE) == O_RDONLY &&\n"
                               "\t    get_random_u32() % 3 == 0)\n"
                               "\t\treturn -EBADF;\n");
        h.culprit = commit_files(repo, h.parent, {{"fs/9p/vfs_file.c", planted}},
                                 "9p: check the open mode in the mmap path", 5);
        std::string c6 = commit_files(
            repo, h.culprit,
            {{"fs/9p/vfs_dir.c", at("fs/9p/vfs_dir.c") + "\n/* rig bisect test: c6 */\n"}},
            "9p: note the readdir path", 6);
        h.bad = commit_files(
            repo, c6,
            {{"fs/9p/vfs_super.c", at("fs/9p/vfs_super.c") + "\n/* rig bisect test: c7 */\n"}},
            "9p: note the superblock setup", 7);
        rig::test::must_run({"git", "update-ref", "refs/rig-tests/bisect-functional", h.bad}, repo);
        return h;
    }();
    return history;
}

// (b) base, one harmless commit, a 20 ms sleep in every 9p open, two harmless commits.
struct SlowHistory {
    std::string good, culprit, bad;
};

const SlowHistory& slow_history() {
    static SlowHistory history = [] {
        fs::path repo = rig::test::linux_repo();
        const std::string base = rig::test::k_linux_base_tag;
        auto at = [&](const std::string& path) { return rig::test::file_at(repo, base, path); };
        SlowHistory h;
        h.good = rig::test::must_run({"git", "rev-parse", base + "^{commit}"}, repo);
        std::string d1 = commit_files(
            repo, h.good, {{"fs/9p/v9fs.c", at("fs/9p/v9fs.c") + "\n/* rig bisect test: d1 */\n"}},
            "9p: note the session setup", 11);
        std::string slowed = replace_once(at("fs/9p/vfs_file.c"), "#include <linux/uio.h>\n",
                                          "#include <linux/uio.h>\n#include <linux/delay.h>\n");
        slowed =
            replace_once(slowed, "int v9fs_file_open(struct inode *inode, struct file *file)\n{\n",
                         "int v9fs_file_open(struct inode *inode, struct file *file)\n{\n"
                         "\tmsleep(20);\n");
        h.culprit = commit_files(repo, d1, {{"fs/9p/vfs_file.c", slowed}},
                                 "9p: wait for the server before open", 12);
        std::string d3 = commit_files(
            repo, h.culprit,
            {{"fs/9p/vfs_dir.c", at("fs/9p/vfs_dir.c") + "\n/* rig bisect test: d3 */\n"}},
            "9p: note the readdir path", 13);
        h.bad = commit_files(
            repo, d3,
            {{"fs/9p/vfs_super.c", at("fs/9p/vfs_super.c") + "\n/* rig bisect test: d4 */\n"}},
            "9p: note the superblock setup", 14);
        rig::test::must_run({"git", "update-ref", "refs/rig-tests/bisect-slow", h.bad}, repo);
        return h;
    }();
    return history;
}

// (c) base, a 20 ms sleep in every 9p open, then a second one: the middle commit is as far
// from GOOD as from BAD, so neither verdict would be honest.
struct HalfwayHistory {
    std::string good, halfway, bad;
};

const HalfwayHistory& halfway_history() {
    static HalfwayHistory history = [] {
        fs::path repo = rig::test::linux_repo();
        const std::string base = rig::test::k_linux_base_tag;
        std::string file = rig::test::file_at(repo, base, "fs/9p/vfs_file.c");
        file = replace_once(file, "#include <linux/uio.h>\n",
                            "#include <linux/uio.h>\n#include <linux/delay.h>\n");
        const std::string open = "int v9fs_file_open(struct inode *inode, struct file *file)\n{\n";
        HalfwayHistory h;
        h.good = rig::test::must_run({"git", "rev-parse", base + "^{commit}"}, repo);
        h.halfway =
            commit_files(repo, h.good,
                         {{"fs/9p/vfs_file.c", replace_once(file, open, open + "\tmsleep(20);\n")}},
                         "9p: wait for the server before open", 21);
        h.bad = commit_files(repo, h.halfway,
                             {{"fs/9p/vfs_file.c",
                               replace_once(file, open, open + "\tmsleep(20);\n\tmsleep(20);\n")}},
                             "9p: wait twice", 22);
        rig::test::must_run({"git", "update-ref", "refs/rig-tests/bisect-halfway", h.bad}, repo);
        return h;
    }();
    return history;
}

// (d) base, two harmless commits, 9p's loose cache no longer answering getattr from the
// inode (every stat asks the server), two harmless commits.
struct CachingHistory {
    std::string good, parent, culprit, bad;
};

const CachingHistory& caching_history() {
    static CachingHistory history = [] {
        fs::path repo = rig::test::linux_repo();
        const std::string base = rig::test::k_linux_base_tag;
        auto at = [&](const std::string& path) { return rig::test::file_at(repo, base, path); };
        CachingHistory h;
        h.good = rig::test::must_run({"git", "rev-parse", base + "^{commit}"}, repo);
        std::string e1 = commit_files(
            repo, h.good, {{"fs/9p/v9fs.c", at("fs/9p/v9fs.c") + "\n/* rig bisect test: e1 */\n"}},
            "9p: note the session setup", 31);
        h.parent = commit_files(
            repo, e1,
            {{"fs/9p/vfs_dir.c", at("fs/9p/vfs_dir.c") + "\n/* rig bisect test: e2 */\n"}},
            "9p: note the readdir path", 32);
        // The session is no longer needed once the early return is gone: dropped with it,
        // so the kernel builds without a set-but-unused warning.
        std::string uncached =
            replace_once(at("fs/9p/vfs_inode_dotl.c"),
                         "\tstruct dentry *dentry = path->dentry;\n"
                         "\tstruct v9fs_session_info *v9ses;\n"
                         "\tstruct p9_fid *fid;\n"
                         "\tstruct p9_stat_dotl *st;\n\n"
                         "\tp9_debug(P9_DEBUG_VFS, \"dentry: %p\\n\", dentry);\n"
                         "\tv9ses = v9fs_dentry2v9ses(dentry);\n"
                         "\tif (v9ses->cache == CACHE_LOOSE || v9ses->cache == CACHE_FSCACHE) {\n"
                         "\t\tgeneric_fillattr(&init_user_ns, d_inode(dentry), stat);\n"
                         "\t\treturn 0;\n"
                         "\t}\n",
                         "\tstruct dentry *dentry = path->dentry;\n"
                         "\tstruct p9_fid *fid;\n"
                         "\tstruct p9_stat_dotl *st;\n\n"
                         "\tp9_debug(P9_DEBUG_VFS, \"dentry: %p\\n\", dentry);\n");
        h.culprit = commit_files(repo, h.parent, {{"fs/9p/vfs_inode_dotl.c", uncached}},
                                 "9p: always ask the server for attributes", 33);
        std::string e4 = commit_files(
            repo, h.culprit,
            {{"fs/9p/vfs_super.c", at("fs/9p/vfs_super.c") + "\n/* rig bisect test: e4 */\n"}},
            "9p: note the superblock setup", 34);
        h.bad = commit_files(
            repo, e4,
            {{"fs/9p/vfs_addr.c", at("fs/9p/vfs_addr.c") + "\n/* rig bisect test: e5 */\n"}},
            "9p: note the address space operations", 35);
        rig::test::must_run({"git", "update-ref", "refs/rig-tests/bisect-caching", h.bad}, repo);
        return h;
    }();
    return history;
}

// What a bisect step's guests run. The bisect is what is tested, so each workload is the
// cheapest one that shows its regression: a guest's boot, not a compile under TCG, is then
// most of a sample. Each guest has one vCPU, so that a step's samples run two at once.
struct Workload {
    std::string yaml; // the scenario's workload: block, one line
    std::string guest = "{cpus: 1}";
};

// `command` in a generated project of four units (five sources with main.c).
Workload in_project(const std::string& command) {
    return {"{generate: {units: 4, headers: 2, functions: 8}, command: \"" + command + "\"}"};
}

// Reads the project's eight files with one cat: under the planted open error, some of them
// fail each run (all eight open, at one in three each: about 96% of runs), each with its
// own line ("cat: units/unit_2.c: Bad file descriptor").
const Workload k_reads = in_project("cat Makefile main.c units/*.c include/*.h > /dev/null");

// Opens: ten rounds of the shell opening each of the project's five sources itself (a
// builtin read, no program started: every exec opens its binary and libraries over the
// root share, another 20 or so opens). Measured under TCG: 0.3 s as built, 1.1 s with a
// 20 ms sleep in every 9p open, 1.8 s with two.
const Workload k_opens =
    in_project("for i in 1 2 3 4 5 6 7 8 9 10; do for f in *.c; do read -r line < $f; done; done");

// Stats: each ls -l stats every file of the project: loose mode answers from the inode,
// the planted caching regression asks the server each time.
const Workload k_stats = in_project("for i in 1 2 3 4 5 6 7 8; do ls -lR > /dev/null; done");

// One git kernel as [base, release] (the kernels suite's folder), cache loose and mmap. A
// boot takes seconds: its minute bounds what a guest that hangs there (seen once under TCG)
// costs the suite; the bisects' other scenarios below take the same timeouts.
fs::path write_scenario(const Scratch& scratch, const std::string& name,
                        const Workload& workload = k_reads) {
    fs::path file = scratch.dir / (name + ".yaml");
    std::ofstream(file) << "name: " << name << "\nkernels:\n"
                        << "  - {name: linux, git: " << rig::test::linux_repo().string()
                        << ", ref: " << rig::test::k_linux_base_tag
                        << ", config: [base, release]}\n"
                        << "matrix:\n  fs: 9p\n  cache: [loose, mmap]\n"
                        << "workload: " << workload.yaml << "\n"
                        << "guest: " << workload.guest << "\n"
                        << "timeouts: {boot: 1m, workload: 10m, silence: 5m}\n";
    return file;
}

std::vector<std::string> start_args(const Scratch& scratch, const fs::path& scenario,
                                    const std::string& cell, const std::string& good,
                                    const std::string& bad, std::vector<std::string> extra) {
    std::vector<std::string> args{"--db",
                                  scratch.db.string(),
                                  "bisect",
                                  "start",
                                  scenario.string(),
                                  "--cell",
                                  cell,
                                  "--good",
                                  good,
                                  "--bad",
                                  bad};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_cost(const std::string& what, const fs::path& db, double wall) {
    std::cout << "[ measured ] " << what << ": " << one(db, "SELECT count(*) FROM kernel_builds")
              << " builds (" << one(db, "SELECT count(*) FROM kernel_builds WHERE outcome != 'ok'")
              << " failed), " << one(db, "SELECT count(*) FROM samples") << " boots, "
              << static_cast<int>(wall) << " s wall\n";
}

TEST(Bisect, PlantedErrorFoundPastABrokenRangeAfterAKill) {
    Scratch scratch("functional");
    const FunctionalHistory& h = functional_history();
    fs::path scenario = write_scenario(scratch, "bisect-functional");
    auto args =
        start_args(scratch, scenario, "cache=mmap", h.good, h.bad,
                   {"--samples", "3", "--confidence", "0.9", "--verify-revert", "--jobs", "2"});
    auto started = std::chrono::steady_clock::now();
    pid_t rig = rig::test::start_rig_logged(args, scratch.dir / "first.log");
    // Kill -9 once the endpoints are done and a guest of the bisect proper is running.
    bool ready = rig::test::wait_while_running(rig, std::chrono::minutes(90), [&] {
        return fs::exists(scratch.db) &&
               one(scratch.db, "SELECT count(*) FROM bisect_steps WHERE role = 'bisect'") != "0" &&
               one(scratch.db, "SELECT count(*) FROM bisect_steps WHERE role = 'bisect' AND "
                               "verdict = 'good'") == "0" &&
               !processes_mentioning(scratch.dir.string() + "/bisects").empty();
    });
    ASSERT_TRUE(ready) << rig::test::read_text(scratch.dir / "first.log");
    std::this_thread::sleep_for(std::chrono::seconds(1));
    // The kill campaign's bisect part (the faults suite has the run's): kill -9, then
    // resumes killed at random moments (a build, a guest, a verdict being stored), each
    // leaving no guest, no make (which runs as rig-qemu when rig is root) and a bisect
    // that reads as interrupted. RIG_BISECT_KILLS resumes are killed (3 by default): two
    // of every three after 1 to 5 s (its start, a make reading the tree, a guest booting),
    // every third after 8 to 20 s, which lets a build get on (a no-op make of the tree
    // alone takes 12 s), so that many kills still land before its minute or two of work
    // ends.
    const std::vector<std::string> resume{"--db", scratch.db.string(), "bisect", "resume", "1"};
    const char* kills_wanted = std::getenv("RIG_BISECT_KILLS");
    const int k_kills = 1 + (kills_wanted ? std::max(0, std::atoi(kills_wanted)) : 3);
    const unsigned seed =
        static_cast<unsigned>(std::chrono::system_clock::now().time_since_epoch().count());
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> short_life_ms(1000, 5000), long_life_ms(8000, 20000);
    const long build_user = ::geteuid() == 0 ? rig::test::account_uid("rig-qemu") : -2;
    std::string steps_before, samples_before;
    int kills = 0, orphans = 0, shown_running = 0;
    std::string left_behind, statuses; // what failed, for the message
    for (;;) {
        ++kills;
        orphans += !rig::test::kill_leaves_no_process(rig, scratch.dir.string() + "/bisects");
        // Its builds' processes (guests of suites beside this one run as that user too): they
        // get SIGTERM once rig is gone and SIGKILL 3 s later (proc/watcher.cpp), so only one
        // alive well past that is left behind. On a loaded host, make's SIGTERM handling
        // (removing the targets it was writing) may take the whole grace.
        for (int i = 0; i < 80 && !rig::test::processes_of_user(build_user, true).empty(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        for (int pid : rig::test::processes_of_user(build_user, true)) {
            ++orphans;
            left_behind += "\n  after kill " + std::to_string(kills) + ": " +
                           rig::test::read_text("/proc/" + std::to_string(pid) + "/comm");
        }
        // A kill that landed after the bisect stored its end, as its process was exiting,
        // killed no bisect: the campaign ends there.
        if (one(scratch.db, "SELECT status FROM bisects") != "running") {
            --kills;
            break;
        }
        auto status = run_rig({"--db", scratch.db.string(), "bisect", "status"});
        if (status.out.find("interrupted") == std::string::npos) {
            ++shown_running;
            statuses += "\n  after kill " + std::to_string(kills) + ": " + status.out;
        }
        // What a later life must keep: every step and sample stored so far.
        steps_before = one(scratch.db, "SELECT count(*) FROM bisect_steps");
        samples_before = one(scratch.db, "SELECT group_concat(id) FROM samples");
        if (kills >= k_kills)
            break;
        rig = rig::test::start_rig_logged(resume,
                                          scratch.dir / ("life-" + std::to_string(kills) + ".log"));
        std::this_thread::sleep_for(std::chrono::milliseconds(
            kills % 3 == 0 ? long_life_ms(random) : short_life_ms(random)));
        if (::waitpid(rig, nullptr, WNOHANG) == rig)
            break; // the bisect ended before this kill
    }
    std::cout << "[ measured ] bisect kill campaign: " << kills << " kills, " << orphans
              << " orphans, " << shown_running << " statuses not saying interrupted (seed " << seed
              << ")\n";

    auto resumed = run_rig(resume, k_bisect_timeout);
    double wall = seconds_since(started);
    ASSERT_EQ(resumed.exit_code, 0)
        << rig::test::read_text(scratch.dir / "first.log") << resumed.out << resumed.err;
    print_cost("functional bisect (7 commits, killed " + std::to_string(kills) + " times)",
               scratch.db, wall);
    // The report first, the checks after it: a log cut to its last lines still shows what
    // failed.
    auto report = run_rig({"--db", scratch.db.string(), "bisect", "report", "1"});
    std::cout << report.out;
    EXPECT_EQ(report.exit_code, 0) << report.err;
    EXPECT_EQ(orphans, 0) << left_behind;
    EXPECT_EQ(shown_running, 0) << statuses;
    EXPECT_EQ(one(scratch.db, "SELECT status, culprit FROM bisects"), "culprit\t" + h.culprit);
    // Nothing stored before the kill was redone: the steps and samples are still there, no
    // commit was built twice and no step measured twice.
    EXPECT_GE(std::stoi(one(scratch.db, "SELECT count(*) FROM bisect_steps")),
              std::stoi(steps_before));
    for (const std::string& id : [&] {
             std::vector<std::string> ids;
             std::stringstream in(samples_before);
             std::string id;
             while (std::getline(in, id, ','))
                 ids.push_back(id);
             return ids;
         }())
        EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM samples WHERE id = " + id), "1")
            << "sample " << id << " stored before the last kill";
    // (BAD with the culprit reverted is another artifact of the same commit and config.)
    EXPECT_TRUE(query(scratch.db, "SELECT b.\"commit\" FROM kernel_builds b LEFT JOIN "
                                  "kernel_artifacts a ON a.id = b.artifact_id GROUP BY "
                                  "b.\"commit\", b.config_hash, COALESCE(a.cache_key, '') "
                                  "HAVING count(*) > 1")
                    .empty());
    EXPECT_TRUE(query(scratch.db, "SELECT role, \"commit\" FROM bisect_steps GROUP BY role, "
                                  "\"commit\" HAVING count(*) > 1")
                    .empty());
    // The broken range was skipped, never called good or bad.
    auto broken = query(scratch.db, "SELECT verdict, build_outcome FROM bisect_steps WHERE "
                                    "\"commit\" IN ('" +
                                        h.broken1 + "', '" + h.broken2 + "')");
    EXPECT_FALSE(broken.empty());
    for (const auto& row : broken)
        EXPECT_EQ(row, "skip\tbuild-failed");
    // Cost: at most ceil(log2 7) + 2 = 5 builds plus the skipped ones.
    int skipped = std::stoi(one(scratch.db, "SELECT count(*) FROM bisect_steps WHERE verdict = "
                                            "'skip'"));
    EXPECT_LE(std::stoi(one(scratch.db, "SELECT count(DISTINCT \"commit\") FROM bisect_steps")),
              5 + skipped);
    EXPECT_EQ(one(scratch.db, "SELECT verdict, \"commit\" FROM bisect_steps WHERE role = "
                              "'verify-culprit'"),
              "bad\t" + h.culprit);
    EXPECT_EQ(one(scratch.db, "SELECT verdict, \"commit\" FROM bisect_steps WHERE role = "
                              "'verify-parent'"),
              "good\t" + h.parent);
    // BAD with the culprit reverted passes.
    EXPECT_EQ(one(scratch.db, "SELECT verdict, \"commit\" FROM bisect_steps WHERE role = "
                              "'verify-revert'"),
              "good\t" + h.bad);

    // (The report was printed above.)
    EXPECT_NE(report.out.find("first bad commit: " + h.culprit), std::string::npos);
    EXPECT_NE(report.out.find("9p: check the open mode in the mmap path"), std::string::npos);
    EXPECT_NE(report.out.find("rig <rig@localhost>"), std::string::npos);
    // One real line of the family, whichever file it named, never the normalized form.
    EXPECT_NE(report.out.find("regression: cat: "), std::string::npos);
    EXPECT_NE(report.out.find(": Bad file descriptor ("), std::string::npos);
    EXPECT_EQ(report.out.find("*: Bad file descriptor"), std::string::npos);
    EXPECT_NE(report.out.find("confidence"), std::string::npos);
    EXPECT_NE(report.out.find("Subject: [REGRESSION]"), std::string::npos);
    EXPECT_NE(report.out.find("The first bad commit is"), std::string::npos);
    // The failing files differed from run to run at BAD: a line per file, one family.
    EXPECT_GT(std::stoi(one(scratch.db, "SELECT count(DISTINCT l.line) FROM bisect_steps s, "
                                        "json_each(s.samples) j JOIN error_lines l ON "
                                        "l.sample_id = j.value WHERE s.role = 'bad-endpoint' "
                                        "AND l.line LIKE '%Bad file descriptor'")),
              1);

    // The log replays in a clone of the user's repository with git alone.
    auto log = run_rig({"--db", scratch.db.string(), "bisect", "log", "1"});
    ASSERT_EQ(log.exit_code, 0) << log.err;
    EXPECT_NE(log.out.find("# first bad commit: [" + h.culprit + "]"), std::string::npos)
        << log.out;
    fs::path clone = scratch.dir / "replay.git";
    rig::test::must_run({"git", "clone", "-q", "--bare", "--shared",
                         rig::test::linux_repo().string(), clone.string()});
    std::ofstream(scratch.dir / "bisect.log") << log.out;
    rig::test::must_run({"git", "bisect", "replay", (scratch.dir / "bisect.log").string()}, clone);
    EXPECT_EQ(rig::test::must_run({"git", "rev-parse", "refs/bisect/bad"}, clone), h.culprit);

    auto status_out = run_rig({"--db", scratch.db.string(), "bisect", "status"});
    EXPECT_NE(status_out.out.find("culprit"), std::string::npos) << status_out.out;
}

TEST(Bisect, EndpointsThatDoNotReproduceGiveAClearMessage) {
    Scratch scratch("endpoints");
    const FunctionalHistory& h = functional_history();
    fs::path scenario = write_scenario(scratch, "bisect-endpoints");
    auto started = std::chrono::steady_clock::now();
    // cache=loose never takes the mmap write path: nothing to find at BAD. Ctrl-C while its
    // first guest runs first: exit 130, no process left, and the resume finishes the check.
    pid_t rig = rig::test::start_rig_logged(start_args(scratch, scenario, "cache=loose", h.good,
                                                       h.bad, {"--samples", "2", "--jobs", "2"}),
                                            scratch.dir / "interrupted.log");
    const std::string guests = scratch.dir.string() + "/bisects";
    ASSERT_TRUE(rig::test::wait_while_running(rig, std::chrono::minutes(60), [&] {
        return !processes_mentioning(guests).empty();
    })) << rig::test::read_text(scratch.dir / "interrupted.log");
    EXPECT_EQ(rig::test::interrupt(rig), 130)
        << rig::test::read_text(scratch.dir / "interrupted.log");
    EXPECT_TRUE(processes_mentioning(guests).empty());
    EXPECT_EQ(one(scratch.db, "SELECT status FROM bisects"), "interrupted");
    // A second rig on the same bisect refuses while one holds it.
    {
        int held = ::open((scratch.dir / "bisects" / "1" / "lock").c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(held, 0);
        ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
        auto refused = run_rig({"--db", scratch.db.string(), "bisect", "resume", "1"});
        ::close(held);
        EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
        EXPECT_NE(refused.err.find("already running"), std::string::npos) << refused.err;
    }
    auto loose = run_rig({"--db", scratch.db.string(), "bisect", "resume", "1"}, k_bisect_timeout);
    EXPECT_EQ(loose.exit_code, 1) << loose.out << loose.err;
    EXPECT_NE(loose.out.find("not reproducible at BAD"), std::string::npos) << loose.out;
    // GOOD given after the culprit already shows it.
    auto late = run_rig(start_args(scratch, scenario, "cache=mmap", h.culprit, h.bad,
                                   {"--samples", "2", "--jobs", "2"}),
                        k_bisect_timeout);
    EXPECT_EQ(late.exit_code, 1) << late.out << late.err;
    EXPECT_NE(late.out.find("already bad at GOOD"), std::string::npos) << late.out;
    EXPECT_EQ(query(scratch.db, "SELECT status, COALESCE(culprit, '-') FROM bisects ORDER BY id"),
              (std::vector<std::string>{"not-reproducible\t-", "not-reproducible\t-"}));
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM bisect_steps WHERE role = 'bisect'"), "0");
    print_cost("two endpoint checks", scratch.db, seconds_since(started));
    // Usage errors are caught before anything is built.
    auto backwards = run_rig(start_args(scratch, scenario, "cache=mmap", h.bad, h.good, {}));
    EXPECT_EQ(backwards.exit_code, 2) << backwards.out << backwards.err;
    auto nothing = run_rig(start_args(scratch, scenario, "cache=none", h.good, h.bad, {}));
    EXPECT_EQ(nothing.exit_code, 2);
    EXPECT_NE(nothing.err.find("matches 0 cells"), std::string::npos) << nothing.err;
}

// backend slurm: each sample is a job on a one-node cluster, the builds stay here (the
// endpoints are cached by the test above). A cluster of its own, on ports of its own: the
// slurm suite's may be running at the same time in scripts/test's other lane.
TEST(Bisect, SamplesRunAsSlurmJobsWithBackendSlurm) {
    rig::test::SlurmCluster cluster("slurm-cluster-bisect", "16837,16838");
    Scratch scratch("slurm");
    const FunctionalHistory& h = functional_history();
    fs::path scenario = write_scenario(scratch, "bisect-slurm");
    std::ofstream(scenario, std::ios::app) << "backend: slurm\nslurm: {time: 30m}\n";
    auto result =
        run_rig(start_args(scratch, scenario, "cache=loose", h.good, h.bad, {"--samples", "2"}),
                k_bisect_timeout);
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_NE(result.out.find("not reproducible at BAD"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("slurm: submitted job"), std::string::npos) << result.out;
    std::string samples = one(scratch.db, "SELECT count(*) FROM samples WHERE outcome = 'ok'");
    EXPECT_GE(std::stoi(samples), 2);
    // Each sample's record came from a worker, beside its job file.
    size_t records = 0;
    for (const auto& entry : fs::directory_iterator(scratch.dir / "bisects/1/jobs"))
        records += entry.path().string().ends_with(".record.json");
    EXPECT_EQ(std::to_string(records), samples);
    auto queue = rig::proc::run({"squeue", "--noheader"});
    ASSERT_TRUE(queue);
    EXPECT_EQ(queue->out, "");
}

TEST(Bisect, InfraErrorsStopTheBisectWithItsStateSaved) {
    Scratch scratch("infra");
    const FunctionalHistory& h = functional_history();
    // QEMU cannot start a guest with 64 TiB of memory: a real infra error at every sample.
    fs::path scenario = write_scenario(scratch, "bisect-infra", {k_reads.yaml, "{memory: 64T}"});
    auto args =
        start_args(scratch, scenario, "cache=mmap", h.good, h.bad, {"--infra-retries", "1"});
    auto stopped = run_rig(args, k_bisect_timeout);
    EXPECT_EQ(stopped.exit_code, 3) << stopped.out << stopped.err;
    EXPECT_NE(stopped.out.find("2 infra errors in a row"), std::string::npos) << stopped.out;
    EXPECT_NE(stopped.out.find("cannot set up guest memory"), std::string::npos) << stopped.out;
    EXPECT_EQ(one(scratch.db, "SELECT status FROM bisects"), "stopped");
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM bisect_steps"), "0");
    EXPECT_EQ(one(scratch.db, "SELECT group_concat(outcome) FROM samples"),
              "infra-error,infra-error");
    // Resumable: it retries, and stops again while the machinery is still broken.
    auto again = run_rig({"--db", scratch.db.string(), "bisect", "resume", "1"}, k_bisect_timeout);
    EXPECT_EQ(again.exit_code, 3) << again.out << again.err;
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM samples"), "4");
}

// `rig bisect start` on cache=loose with duration:+10%, 3 samples per endpoint, its cost
// printed as `what`.
rig::proc::RunResult duration_bisect(const Scratch& scratch, const std::string& good,
                                     const std::string& bad, int max_samples,
                                     const std::string& what) {
    fs::path scenario =
        write_scenario(scratch, "bisect-" + scratch.dir.filename().string(), k_opens);
    auto started = std::chrono::steady_clock::now();
    auto result = run_rig(start_args(scratch, scenario, "cache=loose", good, bad,
                                     {"--criterion", "duration:+10%", "--samples", "3",
                                      "--max-samples", std::to_string(max_samples), "--jobs", "2"}),
                          k_bisect_timeout);
    print_cost(what, scratch.db, seconds_since(started));
    return result;
}

TEST(Bisect, PlantedSlowdownFoundWithTheDurationCriterion) {
    Scratch scratch("duration");
    const SlowHistory& h = slow_history();
    auto result = duration_bisect(scratch, h.good, h.bad, 6, "duration bisect (4 commits)");
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT status, culprit FROM bisects"), "culprit\t" + h.culprit)
        << result.out;
    std::cout << result.out;
}

// Rather than name a wrong commit: the halfway commit stays unsure through its sample
// budget, git is told to skip it, and the bisect ends with the range it cannot split.
TEST(Bisect, ACommitHalfwayBetweenTheEndpointsEndsAsARangeNotACulprit) {
    Scratch scratch("halfway");
    const HalfwayHistory& h = halfway_history();
    auto result =
        duration_bisect(scratch, h.good, h.bad, 4, "duration bisect ending in a range (2 commits)");
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(one(scratch.db, "SELECT status, COALESCE(culprit, '-') FROM bisects"),
              "inconclusive\t-")
        << result.out;
    EXPECT_EQ(one(scratch.db, "SELECT verdict, json_array_length(samples) FROM bisect_steps WHERE "
                              "role = 'bisect'"),
              "unsure\t4")
        << result.out;
    EXPECT_NE(result.out.find("the first bad commit is one of " + h.halfway.substr(0, 12) + " " +
                              h.bad.substr(0, 12)),
              std::string::npos)
        << result.out;
    std::cout << result.out;
}

// Counts need no statistics: three samples at each endpoint show a spread far below the
// gap, and from then on one sample decides each commit. With --jobs 2 and one-vCPU guests
// the endpoints' samples run two at once, interleaved over both CPUs. Killed with -9
// while the first step's guest runs and resumed: the rule is made again from the stored
// endpoints, and the lost sample is taken again, so that step too has exactly one.
TEST(Bisect, PlantedCachingRegressionFoundOnAMetricWithOneSamplePerStep) {
    Scratch scratch("metric");
    const CachingHistory& h = caching_history();
    fs::path scenario = write_scenario(scratch, "bisect-metric", k_stats);
    auto args =
        start_args(scratch, scenario, "cache=loose", h.good, h.bad,
                   {"--criterion", "metric:9p.work.getattr:+50%", "--samples", "3", "--jobs", "2"});
    auto started = std::chrono::steady_clock::now();
    pid_t rig = rig::test::start_rig_logged(args, scratch.dir / "first.log");
    const std::string guests = scratch.dir.string() + "/bisects";
    // QEMU, not one of git's short runs in rig's repository under the same folder. A
    // guest of this workload lives about five seconds (KVM or TCG): the kill comes at once.
    auto guest_running = [&] {
        for (int pid : processes_mentioning(guests)) {
            std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
            std::string name;
            if (std::getline(comm, name) && name.rfind("qemu", 0) == 0)
                return true;
        }
        return false;
    };
    bool ready = rig::test::wait_while_running(rig, std::chrono::minutes(90), [&] {
        return fs::exists(scratch.db) &&
               one(scratch.db, "SELECT count(*) FROM bisect_steps WHERE role = "
                               "'good-endpoint'") == "1" &&
               guest_running();
    });
    ASSERT_TRUE(ready) << rig::test::read_text(scratch.dir / "first.log");
    EXPECT_TRUE(rig::test::kill_leaves_no_process(rig, guests));
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM bisect_steps WHERE role = 'bisect'"), "0")
        << rig::test::read_text(scratch.dir / "first.log");
    std::string first = rig::test::read_text(scratch.dir / "first.log");
    EXPECT_NE(first.find("one sample per commit decides"), std::string::npos) << first;
    EXPECT_NE(first.find("2 guests at once on CPUs 0 | 1"), std::string::npos) << first;
    // Each endpoint's samples ran on both CPUs.
    EXPECT_EQ(query(scratch.db, "SELECT s.role, count(DISTINCT m.cpus) FROM bisect_steps s, "
                                "json_each(s.samples) j JOIN samples m ON m.id = j.value "
                                "GROUP BY s.role ORDER BY s.role"),
              (std::vector<std::string>{"bad-endpoint\t2", "good-endpoint\t2"}));

    auto resumed =
        run_rig({"--db", scratch.db.string(), "bisect", "resume", "1"}, k_bisect_timeout);
    double wall = seconds_since(started);
    ASSERT_EQ(resumed.exit_code, 0) << first << resumed.out << resumed.err;
    print_cost("metric bisect (5 commits, killed once)", scratch.db, wall);
    EXPECT_EQ(one(scratch.db, "SELECT status, culprit FROM bisects"), "culprit\t" + h.culprit)
        << first << resumed.out;
    // The resume made the same plan from the stored endpoints.
    EXPECT_NE(resumed.out.find("one sample per commit decides"), std::string::npos) << resumed.out;
    // After the endpoints' three samples each, every step of the bisect took exactly one.
    EXPECT_EQ(query(scratch.db, "SELECT role, json_array_length(samples) FROM bisect_steps "
                                "WHERE role LIKE '%-endpoint' ORDER BY id"),
              (std::vector<std::string>{"bad-endpoint\t3", "good-endpoint\t3"}));
    auto steps = query(scratch.db, "SELECT json_array_length(samples) FROM bisect_steps WHERE "
                                   "role = 'bisect'");
    EXPECT_FALSE(steps.empty()) << resumed.out;
    for (const auto& samples : steps)
        EXPECT_EQ(samples, "1") << resumed.out;
    std::cout << "[ measured ] " << steps.size() << " bisect steps of one sample each\n";
    EXPECT_EQ(one(scratch.db, "SELECT verdict, \"commit\" FROM bisect_steps WHERE role = "
                              "'verify-parent'"),
              "good\t" + h.parent);

    auto report = run_rig({"--db", scratch.db.string(), "bisect", "report", "1"});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    for (const std::string& part :
         {"first bad commit: " + h.culprit, std::string("9p: always ask the server"),
          std::string("9p.work.getattr: GOOD median"), std::string(", BAD median"),
          std::string("CV "), std::string("one sample per commit decides"),
          std::string("3 samples at BAD, 3 at GOOD, 1 per commit")})
        EXPECT_NE(report.out.find(part), std::string::npos) << part << "\n" << report.out;
    std::cout << report.out;
}

// (f) base, 9p losing a write's last byte past 64 KiB while telling the writer it wrote
// it all (cache=none and mmap, whose writes go straight to the server), a harmless commit.
// Nothing errs: the file on the server has a zero byte where a character was.
// A planted culprit on the base and one harmless commit after it, kept under a ref so
// that git's gc leaves them: GOOD (the base), the culprit, BAD.
struct PlantedHistory {
    std::string good, culprit, bad;
};

PlantedHistory planted_history(const std::string& name,
                               const std::map<std::string, std::string>& files,
                               const std::string& message, int day) {
    fs::path repo = rig::test::linux_repo();
    const std::string base = rig::test::k_linux_base_tag;
    PlantedHistory h;
    h.good = rig::test::must_run({"git", "rev-parse", base + "^{commit}"}, repo);
    h.culprit = commit_files(repo, h.good, files, message, day);
    const std::string addr = "fs/9p/vfs_addr.c";
    h.bad = commit_files(
        repo, h.culprit,
        {{addr, rig::test::file_at(repo, base, addr) + "\n/* rig bisect test: " + name + " */\n"}},
        "9p: note the address space operations (" + name + ")", day + 1);
    rig::test::must_run({"git", "update-ref", "refs/rig-tests/bisect-" + name, h.bad}, repo);
    return h;
}

// The signatures of BAD's error lines, with their samples' outcome, exit status and source.
std::vector<std::string> bad_endpoint_lines(const fs::path& db) {
    return query(db, "SELECT DISTINCT m.outcome, m.exit_status, e.source, e.signature FROM "
                     "bisect_steps s, json_each(s.samples) j JOIN samples m ON m.id = j.value "
                     "JOIN error_lines e ON e.sample_id = m.id WHERE s.role = 'bad-endpoint' "
                     "ORDER BY 4");
}

// `rig bisect start --criterion output` on the cache=mmap cell from h.good to h.bad, two
// samples at BAD: its cost printed, and the culprit named and verified.
rig::proc::RunResult bisect_output(const Scratch& scratch, const fs::path& scenario,
                                   const PlantedHistory& h, const std::string& what) {
    auto started = std::chrono::steady_clock::now();
    auto result = run_rig(start_args(scratch, scenario, "cache=mmap", h.good, h.bad,
                                     {"--criterion", "output", "--samples", "2"}),
                          k_bisect_timeout);
    if (result.exit_code != 0)
        return result;
    print_cost(what, scratch.db, seconds_since(started));
    EXPECT_EQ(one(scratch.db, "SELECT status, culprit, criterion FROM bisects"),
              "culprit\t" + h.culprit + "\toutcome:wrong-output")
        << result.out;
    EXPECT_EQ(one(scratch.db, "SELECT verdict FROM bisect_steps WHERE role = 'verify-parent'"),
              "good");
    return result;
}

const PlantedHistory& lost_write_history() {
    static PlantedHistory history = [] {
        fs::path repo = rig::test::linux_repo();
        std::string lossy = replace_once(
            rig::test::file_at(repo, rig::test::k_linux_base_tag, "fs/9p/vfs_file.c"),
            "\torigin = iocb->ki_pos;\n"
            "\tretval = p9_client_write(file->private_data, iocb->ki_pos, from, &err);\n",
            "\torigin = iocb->ki_pos;\n"
            "\tlost = origin >= 65536 && iov_iter_count(from) > 1;\n"
            "\tif (lost)\n"
            "\t\tiov_iter_truncate(from, iov_iter_count(from) - 1);\n"
            "\tretval = p9_client_write(file->private_data, iocb->ki_pos, from, &err);\n"
            "\tif (retval > 0 && lost)\n"
            "\t\tretval += 1;\n");
        lossy = replace_once(lossy, "\tloff_t origin;\n\tint err = 0;\n",
                             "\tloff_t origin;\n\tint err = 0;\n\tbool lost;\n");
        return planted_history("lost-write", {{"fs/9p/vfs_file.c", lossy}},
                               "9p: write in fewer round trips", 51);
    }();
    return history;
}

// The readback workload: two files each way of 96 KiB, so that the guest's writes go past
// 64 KiB.
const Workload k_readback{"{readback: {files: 2, size: 96K}}"};

// Issue "wrong data": a kernel that loses data without a word is the outcome
// wrong-output, the file named, and `--criterion output` bisects to it, verified.
TEST(Bisect, ALostWriteThatPrintsNothingIsWrongOutputAndBisectedToItsCommit) {
    Scratch scratch("output");
    const PlantedHistory& h = lost_write_history();
    fs::path scenario = write_scenario(scratch, "bisect-output", k_readback);
    auto result = bisect_output(scratch, scenario, h, "output bisect (2 commits)");
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    // BAD's samples: the workload exited 0 and printed no error, but the guest's files
    // reached the server changed (and it reads them back so), each named.
    auto bad = bad_endpoint_lines(scratch.db);
    EXPECT_EQ(bad, (std::vector<std::string>{
                       "wrong-output\t0\toutputs\toutput readback/g-0000: the guest reads other "
                       "content than was written",
                       "wrong-output\t0\toutputs\toutput readback/g-0000: the server keeps other "
                       "content than was written",
                       "wrong-output\t0\toutputs\toutput readback/g-0001: the guest reads other "
                       "content than was written",
                       "wrong-output\t0\toutputs\toutput readback/g-0001: the server keeps other "
                       "content than was written"}))
        << result.out;
    EXPECT_EQ(one(scratch.db, "SELECT group_concat(DISTINCT m.outcome) FROM bisect_steps s, "
                              "json_each(s.samples) j JOIN samples m ON m.id = j.value WHERE "
                              "s.role = 'good-endpoint'"),
              "ok");
    auto report = run_rig({"--db", scratch.db.string(), "bisect", "report", "1"});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    for (const std::string& part :
         {"first bad commit: " + h.culprit, std::string("9p: write in fewer round trips"),
          std::string("wrong-output")})
        EXPECT_NE(report.out.find(part), std::string::npos) << part << "\n" << report.out;
    std::cout << report.out;
}

// A read that keeps serving an old page under cache=mmap, which promises every read asks
// the server: the planted culprit keeps mmap-mode dentries (and so their inodes and pages)
// as cache=loose does, and reads mmap-mode files through the page cache.
const PlantedHistory& stale_read_history() {
    static PlantedHistory history = [] {
        fs::path repo = rig::test::linux_repo();
        auto at = [&](const std::string& path) {
            return rig::test::file_at(repo, rig::test::k_linux_base_tag, path);
        };
        std::string cached = replace_once(at("fs/9p/vfs_file.c"),
                                          "\t/* TODO: Check if there are dirty pages */\n"
                                          "\treturn v9fs_file_read_iter(iocb, to);\n",
                                          "\treturn generic_file_read_iter(iocb, to);\n");
        std::string kept =
            replace_once(at("fs/9p/vfs_super.c"),
                         "\tif (v9ses->cache == CACHE_LOOSE || v9ses->cache == CACHE_FSCACHE)\n"
                         "\t\tsb->s_d_op = &v9fs_cached_dentry_operations;\n",
                         "\tif (v9ses->cache == CACHE_LOOSE || v9ses->cache == CACHE_FSCACHE ||\n"
                         "\t    v9ses->cache == CACHE_MMAP)\n"
                         "\t\tsb->s_d_op = &v9fs_cached_dentry_operations;\n");
        return planted_history("stale-read",
                               {{"fs/9p/vfs_file.c", cached}, {"fs/9p/vfs_super.c", kept}},
                               "9p: serve mmap-mode reads from the page cache", 53);
    }();
    return history;
}

// Issue "wrong data", coherency: the host rewrites a file the guest has read, and a kernel
// that keeps serving the old page under a mode that promises it never does prints nothing;
// the coherency probe makes it wrong-output, and `--criterion output` finds the commit.
TEST(Bisect, AStaleReadUnderAModeThatPromisesFreshReadsIsBisectedToItsCommit) {
    Scratch scratch("stale");
    const PlantedHistory& h = stale_read_history();
    fs::path scenario = write_scenario(
        scratch, "bisect-stale",
        Workload{"{command: \"true\", coherency: {changes: [rewrite, append], window: 500ms}}"});
    auto result = bisect_output(scratch, scenario, h, "stale-read bisect (2 commits)");
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    // BAD's samples: the guest saw neither the host's rewrite nor its append (the kept
    // inode's size is the old one too), and nothing printed an error.
    auto bad = bad_endpoint_lines(scratch.db);
    EXPECT_EQ(bad, (std::vector<std::string>{
                       "wrong-output\t0\tcoherency\tcoherency: a rewrite stays stale past the "
                       "promise (immediate)",
                       "wrong-output\t0\tcoherency\tcoherency: an append stays stale past the "
                       "promise (immediate)"}))
        << result.out;
    // GOOD's samples saw each change at their first read.
    EXPECT_EQ(one(scratch.db, "SELECT group_concat(DISTINCT m.outcome) || ' ' || max(x.value) "
                              "FROM bisect_steps s, json_each(s.samples) j JOIN samples m ON "
                              "m.id = j.value JOIN metrics x ON x.sample_id = m.id AND x.name = "
                              "'stale.reads' WHERE s.role = 'good-endpoint'"),
              "ok 0.0");
    auto report = run_rig({"--db", scratch.db.string(), "bisect", "report", "1"});
    EXPECT_EQ(report.exit_code, 0) << report.err;
    for (const std::string& part : {"first bad commit: " + h.culprit,
                                    std::string("9p: serve mmap-mode reads from the page cache"),
                                    std::string("stale.rewrite.unseen")})
        EXPECT_NE(report.out.find(part), std::string::npos) << part << "\n" << report.out;
    std::cout << report.out;
}

// A posted series as `git format-patch --cover-letter --thread --base` mails it: three
// patches on the base, the second the planted caching regression (the metric bisect's
// culprit, on the first patch instead of on its own parent).
struct PostedSeries {
    std::string base, first, culprit, last;
    fs::path mbox;
    std::string cover_id; // its Message-Id, without <>
};

PostedSeries posted_series(const fs::path& dir) {
    fs::path repo = rig::test::linux_repo();
    const CachingHistory& caching = caching_history();
    const std::string base = rig::test::k_linux_base_tag;
    auto at = [&](const std::string& path) { return rig::test::file_at(repo, base, path); };
    PostedSeries s;
    s.base = caching.good;
    s.first = commit_files(repo, s.base,
                           {{"fs/9p/v9fs.c", at("fs/9p/v9fs.c") + "\n/* rig bisect test: e1 */\n"}},
                           "9p: note the session setup", 31);
    s.culprit =
        commit_files(repo, s.first,
                     {{"fs/9p/vfs_inode_dotl.c",
                       rig::test::file_at(repo, caching.culprit, "fs/9p/vfs_inode_dotl.c")}},
                     "9p: always ask the server for attributes", 42);
    s.last = commit_files(
        repo, s.culprit,
        {{"fs/9p/vfs_super.c", at("fs/9p/vfs_super.c") + "\n/* rig bisect test: e4 */\n"}},
        "9p: note the superblock setup", 43);
    rig::test::must_run({"git", "update-ref", "refs/rig-tests/bisect-series", s.last}, repo);
    fs::path patches = dir / "patches";
    rig::test::must_run({"git", "format-patch", "-q", "--cover-letter", "--thread",
                         "--base=" + s.base, "-o", patches.string(), s.base + ".." + s.last},
                        repo, rig::test::git_identity());
    std::string mbox;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(patches))
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files)
        mbox += rig::test::read_text(file);
    mbox = replace_once(mbox, "*** SUBJECT HERE ***", "9p: fewer round trips");
    std::string id_line = mbox.substr(mbox.find("Message-Id: <") + 13);
    s.cover_id = id_line.substr(0, id_line.find('>'));
    s.mbox = dir / "series.mbox";
    std::ofstream(s.mbox) << mbox;
    return s;
}

// The series' scenario: the metric bisect's workload, cache loose, without and with it.
fs::path write_series_scenario(const Scratch& scratch, const std::string& name,
                               const fs::path& mbox) {
    fs::path file = scratch.dir / (name + ".yaml");
    std::ofstream(file) << "name: " << name << "\nkernels:\n"
                        << "  - {name: linux, git: " << rig::test::linux_repo().string()
                        << ", config: [base, release], series: " << mbox.filename().string()
                        << "}\n"
                        << "matrix:\n  fs: 9p\n  cache: loose\n"
                        << "workload: " << k_stats.yaml << "\nguest: " << k_stats.guest << "\n"
                        << "repeat: 2\ntimeouts: {boot: 1m, workload: 10m, silence: 5m}\n";
    return file;
}

// The A/B table shows the series' effect on the count with the usual statistics; a bisect
// over its patches names the second, verified; its report threads under the cover letter
// in Python's mail parser. A series that does not apply stops the run before anything is
// built, naming the patch and the hunk.
TEST(Bisect, APostedSeriesIsMeasuredWithoutAndWithItAndItsRegressingPatchNamed) {
    Scratch scratch("series");
    PostedSeries series = posted_series(scratch.dir);

    std::string broken = rig::test::read_text(series.mbox);
    broken = replace_once(broken, "\tstruct p9_stat_dotl *st;\n", "\tstruct p9_stat_dotl *stx;\n");
    std::ofstream(scratch.dir / "broken.mbox") << broken;
    auto refused =
        run_rig({"--db", scratch.db.string(), "run",
                 write_series_scenario(scratch, "broken", scratch.dir / "broken.mbox").string()});
    EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
    for (const std::string& part :
         {std::string("broken.yaml:3:"), std::string("kernels[0].series"),
          std::string("patch 2/3 '9p: always ask the server for attributes'"),
          std::string("patch failed: fs/9p/vfs_inode_dotl.c:"), std::string("@@ -")})
        EXPECT_NE(refused.err.find(part), std::string::npos) << part << "\n" << refused.err;

    auto started = std::chrono::steady_clock::now();
    fs::path scenario = write_series_scenario(scratch, "series", series.mbox);
    auto ran = run_rig({"--db", scratch.db.string(), "run", scenario.string()}, k_bisect_timeout);
    ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
    auto table = run_rig({"--db", scratch.db.string(), "report", "--baseline", "series=without",
                          "--metric", "9p.work.getattr"});
    ASSERT_EQ(table.exit_code, 0) << table.err;
    std::cout << table.out;
    // Both rows, the with row exactly apart from the without row, and its what-changed.
    auto row = [&](const std::string& value) {
        std::istringstream lines(table.out);
        for (std::string line; std::getline(lines, line);)
            if (line.find(" loose  " + value + " ") != std::string::npos)
                return line;
        return std::string();
    };
    EXPECT_NE(row("without").find("base"), std::string::npos) << table.out;
    EXPECT_NE(row("with").find("exact"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("9p.work.getattr: "), std::string::npos) << table.out;
    EXPECT_EQ(query(scratch.db, "SELECT count(*) FROM samples s JOIN metrics m ON m.sample_id = "
                                "s.id WHERE m.name = '9p.work.getattr' GROUP BY s.cell_id"),
              (std::vector<std::string>{"2", "2"}));

    // One guest at a time of one vCPU leaves a core spare: --build-ahead builds the next
    // patch's kernel there while the guests run, although they are shorter than two
    // builds, and stops what is unfinished when they end.
    auto bisected =
        run_rig({"--db", scratch.db.string(), "bisect", "start", scenario.string(), "--series",
                 "--criterion", "metric:9p.work.getattr:+50%", "--samples", "2", "--build-ahead"},
                k_bisect_timeout);
    double wall = seconds_since(started);
    ASSERT_EQ(bisected.exit_code, 0) << bisected.out << bisected.err;
    print_cost("series A/B and its bisect (3 patches)", scratch.db, wall);
    const size_t ahead = bisected.out.find("built ahead while its guests ran: ");
    ASSERT_NE(ahead, std::string::npos) << bisected.out;
    std::cout << "[ measured ] "
              << bisected.out.substr(ahead, bisected.out.find('\n', ahead) - ahead) << "\n";
    EXPECT_TRUE(processes_mentioning(std::string(std::getenv("RIG_CACHE")) + "/git/").empty())
        << "a build ahead outlived the bisect";
    std::string culprit = one(scratch.db, "SELECT culprit FROM bisects");
    EXPECT_EQ(one(scratch.db, "SELECT status FROM bisects"), "culprit") << bisected.out;
    // The series' commits are rig's own, made of the patches: the same trees as the test's.
    EXPECT_EQ(rig::test::must_run({"git", "rev-parse", culprit + "^{tree}"},
                                  scratch.dir / "bisects" / "1" / "git"),
              rig::test::must_run({"git", "rev-parse", series.culprit + "^{tree}"},
                                  rig::test::linux_repo()));
    EXPECT_EQ(one(scratch.db, "SELECT verdict FROM bisect_steps WHERE role = 'verify-parent'"),
              "good");
    for (const std::string& part :
         {std::string("patch 2/3 (0002-9p-always-ask-the-server-for-attributes.patch)"),
          std::string("of the series \"[PATCH 0/3] 9p: fewer round trips\""),
          std::string("the series' base")})
        EXPECT_NE(bisected.out.find(part), std::string::npos) << part << "\n" << bisected.out;

    fs::path reply = scratch.dir / "reply.mbox";
    auto reported = run_rig({"--db", scratch.db.string(), "bisect", "report", "1", "--reply",
                             reply.string(), "--from", "Kernel Robot <robot@example.org>"});
    ASSERT_EQ(reported.exit_code, 0) << reported.err;
    // A real mail parser reads the mbox: one message, threaded under the cover letter.
    auto parsed =
        rig::test::must_run({"python3", "-c",
                             "import mailbox, sys\n"
                             "messages = list(mailbox.mbox(sys.argv[1]))\n"
                             "print(len(messages))\n"
                             "m = messages[0]\n"
                             "for key in ('Subject', 'In-Reply-To', 'References', 'From', 'To'):\n"
                             "    print(key + ': ' + ' '.join(str(m[key]).split()))\n"
                             "print('patch 2/3' in m.get_payload())\n",
                             reply.string()});
    EXPECT_EQ(parsed,
              "1\nSubject: Re: [PATCH 0/3] 9p: fewer round trips\nIn-Reply-To: <" +
                  series.cover_id + ">\nReferences: <" + series.cover_id +
                  ">\nFrom: Kernel Robot <robot@example.org>\nTo: rig <rig@localhost>\nTrue")
        << rig::test::read_text(reply);
}

// (e) On the base, one commit: 32 options in fs/9p/Kconfig, 30 of which nothing reads. The
// planted cause, 9P_FS_RIG_A_UNCACHED, makes loose mode ask the server for attributes; it
// depends on 9P_FS_RIG_Z_HELPERS, last in name order, so that alone it does not survive
// olddefconfig: the line turns bad only at Z's switch, with A's taking effect beside it.
std::string config_commit() {
    fs::path repo = rig::test::linux_repo();
    const std::string base = rig::test::k_linux_base_tag;
    auto at = [&](const std::string& path) { return rig::test::file_at(repo, base, path); };
    std::string kconfig = at("fs/9p/Kconfig") +
                          "\nconfig 9P_FS_RIG_A_UNCACHED\n\tbool \"rig test: loose mode asks "
                          "for attributes\"\n\tdepends on 9P_FS && 9P_FS_RIG_Z_HELPERS\n"
                          "\nconfig 9P_FS_RIG_Z_HELPERS\n\tbool \"rig test: helpers\"\n"
                          "\tdepends on 9P_FS\n";
    for (int i = 1; i <= 30; ++i) {
        std::string number = (i < 10 ? "0" : "") + std::to_string(i);
        kconfig += "\nconfig 9P_FS_RIG_UNUSED_" + number + "\n\tbool \"rig test: unused " + number +
                   "\"\n\tdepends on 9P_FS\n";
    }
    std::string uncached =
        replace_once(at("fs/9p/vfs_inode_dotl.c"),
                     "\tif (v9ses->cache == CACHE_LOOSE || v9ses->cache == CACHE_FSCACHE) {\n"
                     "\t\tgeneric_fillattr(&init_user_ns, d_inode(dentry), stat);\n"
                     "\t\treturn 0;\n"
                     "\t}\n",
                     "#ifndef CONFIG_9P_FS_RIG_A_UNCACHED\n"
                     "\tif (v9ses->cache == CACHE_LOOSE || v9ses->cache == CACHE_FSCACHE) {\n"
                     "\t\tgeneric_fillattr(&init_user_ns, d_inode(dentry), stat);\n"
                     "\t\treturn 0;\n"
                     "\t}\n"
                     "#else\n"
                     "\t(void)v9ses;\n"
                     "#endif\n");
    std::string commit =
        commit_files(repo, rig::test::must_run({"git", "rev-parse", base + "^{commit}"}, repo),
                     {{"fs/9p/Kconfig", kconfig}, {"fs/9p/vfs_inode_dotl.c", uncached}},
                     "9p: options for rig's config bisect", 51);
    rig::test::must_run({"git", "update-ref", "refs/rig-tests/bisect-config", commit}, repo);
    return commit;
}

// Between [base, release] and the same with every one of the 32 options on, the bisect
// names Z's switch, verified, within ceil(log2 32) + 2 builds, and its report and mail
// give the set that changed together: A and Z.
TEST(Bisect, AConfigBisectNamesTheOptionsThatTurnACountBad) {
    Scratch scratch("config");
    const std::string commit = config_commit();
    fs::path scenario = scratch.dir / "config.yaml";
    std::ofstream(scenario) << "name: config\nkernels:\n"
                            << "  - {name: linux, git: " << rig::test::linux_repo().string()
                            << ", ref: " << commit << ", config: [base, release]}\n"
                            << "matrix:\n  fs: 9p\n  cache: loose\n"
                            << "workload: " << k_stats.yaml << "\nguest: " << k_stats.guest
                            << "\ntimeouts: {boot: 1m, workload: 10m, silence: 5m}\n";
    std::string all;
    for (const std::string& option : {std::string("A_UNCACHED"), std::string("Z_HELPERS")})
        all += "CONFIG_9P_FS_RIG_" + option + "=y\n";
    for (int i = 1; i <= 30; ++i)
        all += "CONFIG_9P_FS_RIG_UNUSED_" + std::string(i < 10 ? "0" : "") + std::to_string(i) +
               "=y\n";
    std::ofstream(scratch.dir / "rig-all.config") << all;

    auto refused = run_rig({"--db", scratch.db.string(), "bisect", "start", scenario.string(),
                            "--good-config", "base,release", "--bad-config", "base,release,rig-all",
                            "--good", commit, "--bad", commit});
    EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("drop --good and --bad"), std::string::npos) << refused.err;

    auto started = std::chrono::steady_clock::now();
    auto bisected =
        run_rig({"--db", scratch.db.string(), "bisect", "start", scenario.string(), "--good-config",
                 "base,release", "--bad-config", "base,release,rig-all", "--criterion",
                 "metric:9p.work.getattr:+50%", "--samples", "2"},
                k_bisect_timeout);
    double wall = seconds_since(started);
    ASSERT_EQ(bisected.exit_code, 0) << bisected.out << bisected.err;
    print_cost("config bisect (32 options)", scratch.db, wall);
    EXPECT_EQ(one(scratch.db, "SELECT status FROM bisects"), "culprit") << bisected.out;
    EXPECT_EQ(one(scratch.db, "SELECT verdict FROM bisect_steps WHERE role = 'verify-parent'"),
              "good");
    EXPECT_EQ(one(scratch.db, "SELECT verdict FROM bisect_steps WHERE role = 'verify-culprit'"),
              "bad");
    const std::string together = "the .config changed together (the set that turns it bad): "
                                 "CONFIG_9P_FS_RIG_A_UNCACHED=y (was not set), "
                                 "CONFIG_9P_FS_RIG_Z_HELPERS=y (was not set)";
    for (const std::string& part :
         {std::string("32 commits in "), std::string("at most 7 builds"),
          std::string("config:  switch 32/32: CONFIG_9P_FS_RIG_Z_HELPERS=y (was not set)"),
          together,
          std::string("The .config changed together (the set that turns it bad): "
                      "CONFIG_9P_FS_RIG_A_UNCACHED=y")})
        EXPECT_NE(bisected.out.find(part), std::string::npos) << part << "\n" << bisected.out;
    // Every step is the same commit built with its own .config: at most ceil(log2 32) + 2
    // builds plus skips.
    int skipped =
        std::stoi(one(scratch.db, "SELECT count(*) FROM bisect_steps WHERE verdict = 'skip'"));
    EXPECT_LE(std::stoi(one(scratch.db, "SELECT count(DISTINCT \"commit\") FROM bisect_steps")),
              7 + skipped);
    EXPECT_TRUE(query(scratch.db,
                      "SELECT \"commit\" FROM kernel_builds WHERE \"commit\" != '" + commit + "'")
                    .empty());
    // A later report makes the same line again from the stored configs.
    auto report = run_rig({"--db", scratch.db.string(), "bisect", "report", "1"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    EXPECT_NE(report.out.find(together), std::string::npos) << report.out;
    EXPECT_NE(report.out.find("The first bad option is\n\n  CONFIG_9P_FS_RIG_Z_HELPERS=y (was "
                              "not set)\n\nswitch 32 of the 32 options"),
              std::string::npos)
        << report.out;
    std::cout << report.out;
}

} // namespace
