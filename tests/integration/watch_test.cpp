// SPDX-License-Identifier: MIT
// rig watch on a real branch: a bare repository (sharing the kernels suite's objects) whose
// branch advances a few commits per round, harmless ones and a caching regression planted
// here (9p's loose cache no longer keeping dentries once unused, so every lookup walks the
// server again). `rig watch --once` after each advance: the first head is the baseline,
// harmless heads stay good, the planted head is confirmed, bisected and reported in one
// mail that a mail parser and `git mailinfo` read, with its `#regzbot introduced:` line.
// The watcher is killed with -9 at random moments of a round (RIG_WATCH_KILLS times) and
// once during the bisect, and carries on; later rounds neither report it again nor miss
// that a later head still shows it. Then rounds through libvirt and Slurm. Builds are incremental
// in the [base, release] folder the kernels suite shares through RIG_CACHE.
#include "chromium.hpp"
#include "golden.hpp"
#include "libvirtd.hpp"
#include "linux_repo.hpp"
#include "rig_binary.hpp"
#include "scratch.hpp"
#include "slurm_cluster.hpp"

#include <fstream>
#include <random>
#include <sys/wait.h>
#include <thread>

namespace fs = std::filesystem;
using rig::test::commit_files;
using rig::test::count_of;
using rig::test::must_run;
using rig::test::one;
using rig::test::query;
using rig::test::replace_once;
using rig::test::run_rig;

namespace {

constexpr auto k_round_timeout = std::chrono::minutes(60);

// The history the branch advances through, made on top of the kernels suite's base.
struct History {
    std::string base, h1, h2, h3, culprit, h5, h6;
};

const History& history() {
    static History history = [] {
        fs::path repo = rig::test::linux_repo();
        const std::string tag = rig::test::k_linux_base_tag;
        auto at = [&](const std::string& path) { return rig::test::file_at(repo, tag, path); };
        auto noted = [&](const std::string& path, const std::string& note) {
            return std::map<std::string, std::string>{
                {path, at(path) + "\n/* rig watch test: " + note + " */\n"}};
        };
        History h;
        h.base = must_run({"git", "rev-parse", tag + "^{commit}"}, repo);
        h.h1 = commit_files(repo, h.base, noted("fs/9p/v9fs.c", "w1"), "9p: note the options", 41);
        h.h2 = commit_files(repo, h.h1, noted("fs/9p/vfs_dir.c", "w2"), "9p: note readdir", 42);
        h.h3 = commit_files(repo, h.h2, noted("fs/9p/vfs_super.c", "w3"), "9p: note mount", 43);
        std::string dropped = replace_once(at("fs/9p/vfs_dentry.c"),
                                           "\t/* Don't cache negative dentries */\n"
                                           "\tif (d_really_is_negative(dentry))\n"
                                           "\t\treturn 1;\n"
                                           "\treturn 0;\n",
                                           "\t/* Keep no dentry once unused */\n"
                                           "\treturn 1;\n");
        h.culprit = commit_files(repo, h.h3, {{"fs/9p/vfs_dentry.c", dropped}},
                                 "9p: drop unused dentries in every cache mode", 44);
        h.h5 = commit_files(repo, h.culprit, noted("fs/9p/vfs_addr.c", "w5"), "9p: note pages", 45);
        h.h6 = commit_files(repo, h.h5, noted("fs/9p/fid.c", "w6"), "9p: note fids", 46);
        must_run({"git", "update-ref", "refs/rig-tests/watch", h.h6}, repo);
        return h;
    }();
    return history;
}

struct Upstream {
    fs::path dir;
    // Points the branch at `commit`, as a push would.
    void push(const std::string& commit) const {
        must_run({"git", "update-ref", "refs/heads/master", commit}, dir);
    }
};

// A bare repository that borrows the test repository's objects.
Upstream make_upstream(const rig::test::Scratch& scratch) {
    Upstream upstream{scratch.dir / "upstream.git"};
    must_run({"git", "init", "--quiet", "--bare", upstream.dir.string()});
    std::ofstream(upstream.dir / "objects" / "info" / "alternates")
        << (rig::test::linux_repo() / ".git" / "objects").string() << "\n";
    return upstream;
}

// One cell: 9p with cache=loose, stat over the project's files; the walk count is exact.
// `extra`: more top-level keys (a backend).
fs::path write_scenario(const rig::test::Scratch& scratch, const Upstream& upstream,
                        const std::string& extra = "") {
    fs::path file = scratch.dir / "watch.yaml";
    std::ofstream(file)
        << "name: watch-test\nkernels:\n"
        << "  - {name: linux, git: " << rig::test::linux_repo().string()
        << ", ref: " << rig::test::k_linux_base_tag << ", config: [base, release]}\n"
        << "matrix:\n  fs: 9p\n  cache: loose\n"
        << "workload: {generate: {units: 4, headers: 2, functions: 8}, command: \"for i in 1 2 3 "
           "4 5 6; do stat main.c units/*.c include/*.h > /dev/null; done\"}\n"
        << "guest: {cpus: 1}\n"
        << "timeouts: {boot: 1m, workload: 10m, silence: 5m}\n"
        << "watch:\n"
        << "  repo: " << upstream.dir.string() << "\n"
        << "  branch: master\n"
        << "  criteria: [errors, 'metric:9p.work.walk:+50%']\n"
        << "  samples: 2\n"
        << "  from: 'rig robot <rig@example.org>'\n"
        << "  cc: [v9fs@lists.linux.dev, regressions@lists.linux.dev]\n"
        << "  archive: https://lore.example.org/r\n"
        << extra;
    return file;
}

std::vector<std::string> once(const rig::test::Scratch& scratch, const fs::path& scenario) {
    return {"--db", scratch.db.string(), "watch", "--once", scenario.string()};
}

std::vector<fs::path> mails(const fs::path& outbox) {
    std::vector<fs::path> out;
    if (fs::exists(outbox))
        for (const auto& entry : fs::directory_iterator(outbox))
            if (entry.path().extension() == ".mbox")
                out.push_back(entry.path());
    return out;
}

TEST(Watch, APlantedCachingRegressionIsReportedOnceAcrossRoundsAndAKill) {
    rig::test::Scratch scratch("planted", "test-watch");
    const History& h = history();
    Upstream upstream = make_upstream(scratch);
    fs::path scenario = write_scenario(scratch, upstream);
    fs::path outbox = scratch.dir / "outbox";
    auto started = std::chrono::steady_clock::now();

    // Round 1: the first head is the baseline.
    upstream.push(h.base);
    auto first = run_rig(once(scratch, scenario), k_round_timeout);
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_NE(first.out.find("the first head: the baseline"), std::string::npos) << first.out;

    // Round 2: two harmless commits. Killed with -9 at random moments first (its fetch,
    // build, guest or records; RIG_WATCH_KILLS times, once by default), each time started
    // again: in the end the head was tested in one run of one sample, judged good, and no
    // kill left a guest or a build behind.
    upstream.push(h.h2);
    const char* kills_wanted = std::getenv("RIG_WATCH_KILLS");
    const int kills_asked = kills_wanted ? std::max(0, std::atoi(kills_wanted)) : 1;
    const unsigned seed =
        static_cast<unsigned>(std::chrono::system_clock::now().time_since_epoch().count());
    std::mt19937 random(seed);
    const char* cache = std::getenv("RIG_CACHE");
    const std::string builds = cache ? (fs::path(cache) / "git").string() : scratch.dir.string();
    int kills = 0, orphans = 0;
    while (kills < kills_asked) {
        pid_t rig = rig::test::start_rig_logged(
            once(scratch, scenario), scratch.dir / ("second-" + std::to_string(kills) + ".log"));
        std::this_thread::sleep_for(
            std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 1500)(random)));
        if (::waitpid(rig, nullptr, WNOHANG) != 0)
            break; // the round ended before its kill
        ++kills;
        const bool left_nothing = rig::test::kill_leaves_no_process(rig, scratch.dir.string());
        if (!left_nothing || !rig::test::processes_mentioning(builds).empty())
            ++orphans;
    }
    auto second = run_rig(once(scratch, scenario), k_round_timeout);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_EQ(orphans, 0);
    EXPECT_EQ(one(scratch.db, "SELECT status FROM watch_heads WHERE \"commit\" = '" + h.h2 + "'"),
              "good");
    const std::string h2_runs = "FROM runs WHERE scenario_text LIKE '%at " + h.h2 + "%'";
    EXPECT_EQ(one(scratch.db, "SELECT count(*) " + h2_runs), "1");
    EXPECT_EQ(
        one(scratch.db, "SELECT count(*) FROM samples WHERE run_id IN (SELECT id " + h2_runs + ")"),
        "1");
    EXPECT_TRUE(mails(outbox).empty());
    std::cout << "[ measured ] watch kill campaign, round 2: " << kills_asked << " asked, " << kills
              << " landed, " << orphans << " left a process, seed " << seed << "\n";

    // Round 3: a harmless commit, the planted one, another harmless one. Killed while the
    // bisect's guests run, then run again: it carries on.
    upstream.push(h.h5);
    pid_t rig = rig::test::start_rig_logged(once(scratch, scenario), scratch.dir / "third.log");
    const std::string guests = (scratch.dir / "bisects").string();
    bool bisecting = rig::test::wait_while_running(rig, std::chrono::minutes(60), [&] {
        return fs::exists(scratch.db) &&
               one(scratch.db, "SELECT count(*) FROM bisect_steps") != "0" &&
               !rig::test::processes_mentioning(guests).empty();
    });
    ASSERT_TRUE(bisecting) << rig::test::read_text(scratch.dir / "third.log");
    EXPECT_TRUE(rig::test::kill_leaves_no_process(rig, guests));
    EXPECT_TRUE(mails(outbox).empty());
    auto third = run_rig(once(scratch, scenario), k_round_timeout);
    EXPECT_EQ(third.exit_code, 1) << third.out << third.err;
    EXPECT_NE(third.out.find("resuming head " + h.h5.substr(0, 12)), std::string::npos)
        << third.out;
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM bisects"), "1") << third.out;
    EXPECT_EQ(one(scratch.db, "SELECT culprit FROM watch_regressions"), h.culprit) << third.out;
    std::vector<fs::path> reported = mails(outbox);
    ASSERT_EQ(reported.size(), 1u) << third.out;
    const std::string mail = rig::test::read_text(reported.front());
    for (const std::string& part :
         {"Subject: [linux:master] " + h.culprit.substr(0, 12) +
              " 9p: drop unused dentries in every cache mode: ",
          std::string("regression of 9p.work.walk"), "commit: " + h.culprit,
          std::string("To: rig <rig@localhost>"), std::string("Reported-by: rig robot"),
          // From the tree's own get_maintainer.pl, for fs/9p/vfs_dentry.c.
          std::string("v9fs-developer@lists.sourceforge.net"),
          std::string("Dominique Martinet <asmadeus@codewreck.org>"),
          std::string("The kernel's .config:"), std::string("CONFIG_9P_FS=y"),
          std::string("Closes: https://lore.example.org/r/rig-watch."),
          "#regzbot introduced: " + h.culprit.substr(0, 12), std::string("git bisect start"),
          std::string("Content-Type: text/plain; charset=UTF-8")})
        EXPECT_NE(mail.find(part), std::string::npos) << part << "\n" << mail;

    // A real mail parser reads it, and git's own mail splitter takes its headers.
    auto parsed = rig::proc::run(
        {"python3", "-c",
         "import email, email.policy, sys\n"
         "m = email.message_from_binary_file(open(sys.argv[1], 'rb'), "
         "policy=email.policy.default)\n"
         "assert m['Message-ID'] and m['Date'] and m['From'] and m['To'], 'headers'\n"
         "assert m.get_content_type() == 'text/plain'\n"
         "assert '#regzbot introduced:' in m.get_content()\n"
         "print(m['Subject'])\n",
         reported.front().string()});
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->exit_code, 0) << parsed->err;
    EXPECT_NE(parsed->out.find(h.culprit.substr(0, 12)), std::string::npos) << parsed->out;
    fs::path split = scratch.dir / "split";
    fs::create_directories(split);
    EXPECT_EQ(must_run({"git", "mailsplit", "-o" + split.string(), reported.front().string()}),
              "1");

    // The reproducer beside the mail boots the culprit without rig: its run.sh starts QEMU,
    // whose guest runs the workload to its end and powers off.
    const std::string stem = reported.front().stem().string() + ".repro";
    const fs::path tarball = outbox / (stem + ".tar.gz");
    EXPECT_NE(mail.find("tar xf " + stem + ".tar.gz && " + stem + "/run.sh"), std::string::npos)
        << mail;
    const fs::path unpacked = scratch.dir / "reproducer";
    fs::create_directories(unpacked);
    must_run({"tar", "-xf", tarball.string(), "-C", unpacked.string()});
    const fs::path folder = unpacked / stem;
    EXPECT_NE(rig::test::read_text(folder / "config").find("CONFIG_9P_FS=y"), std::string::npos);
    rig::proc::RunOptions boot;
    boot.timeout = std::chrono::minutes(5);
    auto booted = rig::proc::run({(folder / "run.sh").string()}, boot);
    ASSERT_TRUE(booted);
    const std::string channel = rig::test::read_text(folder / "channel.log");
    EXPECT_EQ(booted->exit_code, 0) << booted->err << rig::test::read_text(folder / "console.log");
    EXPECT_NE(channel.find("RIG done"), std::string::npos) << channel;
    const size_t end = channel.find("RIG end ");
    ASSERT_NE(end, std::string::npos) << channel;
    const std::string end_line = channel.substr(end, channel.find('\n', end) - end);
    EXPECT_EQ(end_line.substr(end_line.rfind(' ')), " 0") << end_line; // the workload's status
    std::cout << "[ measured ] reproducer: " << fs::file_size(tarball) / 1024 << " KiB\n";

    // Round 4: nothing moved, nothing reported again.
    auto fourth = run_rig(once(scratch, scenario), k_round_timeout);
    EXPECT_EQ(fourth.exit_code, 1) << fourth.out << fourth.err;
    EXPECT_NE(fourth.out.find("nothing moved"), std::string::npos) << fourth.out;

    // Round 5: one more harmless commit: the regression is still there, linked, not mailed.
    upstream.push(h.h6);
    auto fifth = run_rig(once(scratch, scenario), k_round_timeout);
    EXPECT_EQ(fifth.exit_code, 1) << fifth.out << fifth.err;
    EXPECT_NE(fifth.out.find("still there"), std::string::npos) << fifth.out;
    EXPECT_EQ(mails(outbox).size(), 1u);
    EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM watch_regressions"), "1");
    EXPECT_EQ(query(scratch.db, "SELECT status FROM watch_heads ORDER BY id"),
              (std::vector<std::string>{"good", "good", "bad", "bad"}));

    auto status = run_rig({"--db", scratch.db.string(), "watch", "status"});
    EXPECT_EQ(status.exit_code, 0) << status.err;
    EXPECT_NE(status.out.find(h.culprit.substr(0, 12)), std::string::npos) << status.out;

    // The history: the walk count per head as text, with the regression marked where it
    // was found, and the dashboard the watcher kept, as Chromium renders it.
    auto history = run_rig({"--db", scratch.db.string(), "report", "--history", scenario.string()});
    EXPECT_EQ(history.exit_code, 0) << history.err;
    EXPECT_NE(history.out.find("9p.work.walk of "), std::string::npos) << history.out;
    EXPECT_NE(
        history.out.find("found metric:9p.work.walk:+50%: culprit " + h.culprit.substr(0, 12)),
        std::string::npos)
        << history.out;
    fs::path dashboard = scratch.dir / "dashboard";
    auto rendered =
        rig::test::render_in_chromium(dashboard / "index.html", scratch.dir, 1200, 1400);
    EXPECT_EQ(count_of(rendered.dom, "<svg id=\"trend-"), 1u) << rendered.dom;
    // A point per head (four), one of them where the regression was found.
    EXPECT_EQ(count_of(rendered.dom, "<circle class=\"point "), 4u) << rendered.dom;
    EXPECT_EQ(count_of(rendered.dom, "<g class=\"found\" data-head=\"" + h.h5.substr(0, 12)), 1u)
        << rendered.dom;
    const std::string link = "<a href=\"../outbox/" + reported.front().filename().string() + "\"";
    EXPECT_NE(rendered.dom.find(link), std::string::npos) << rendered.dom;
    EXPECT_EQ(rendered.width, 1200u);
    EXPECT_GT(rendered.png.size(), 20u * 1024) << "the dashboard's screenshot looks blank";
    std::cout
        << "[ measured ] watch, 5 rounds (a kill in the bisect): "
        << one(scratch.db, "SELECT count(*) FROM kernel_builds") << " builds, "
        << one(scratch.db, "SELECT count(*) FROM samples") << " boots, "
        << static_cast<int>(
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count())
        << " s\n"
        << status.out << "\n"
        << mail;
}

// A watch runs with every backend: the same rounds with their guests booted by libvirtd,
// then run as Slurm jobs on a one-node cluster of this suite's own (the slurm suite may run
// its cluster beside it). The heads' kernels are those the test above built, in the shared
// cache, so each round costs one boot: the first head is the baseline, the next is judged
// good against it.
TEST(Watch, RoundsRunThroughLibvirtAndAsSlurmJobs) {
    const History& h = history();
    rig::test::start_libvirtd();
    rig::test::SlurmCluster cluster("slurm-cluster-watch", "16827,16828");
    for (const std::string backend : {"libvirt", "slurm"}) {
        SCOPED_TRACE(backend);
        rig::test::Scratch scratch("backend-" + backend, "test-watch");
        Upstream upstream = make_upstream(scratch);
        fs::path scenario = write_scenario(scratch, upstream,
                                           "backend: " + backend + "\n" +
                                               (backend == "slurm" ? "slurm: {time: 20m}\n" : ""));
        upstream.push(h.base);
        auto first = run_rig(once(scratch, scenario), k_round_timeout);
        ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
        EXPECT_NE(first.out.find("the first head: the baseline"), std::string::npos) << first.out;
        EXPECT_NE(first.out.find("backend " + backend), std::string::npos) << first.out;

        upstream.push(h.h2);
        auto second = run_rig(once(scratch, scenario), k_round_timeout);
        ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
        EXPECT_NE(second.out.find("backend " + backend), std::string::npos) << second.out;
        EXPECT_EQ(query(scratch.db, "SELECT status FROM watch_heads ORDER BY id"),
                  (std::vector<std::string>{"good", "good"}));
        EXPECT_EQ(one(scratch.db, "SELECT count(*) FROM samples WHERE outcome = 'ok'"), "2");
        EXPECT_TRUE(mails(scratch.dir / "outbox").empty());
        if (backend == "slurm") { // the worker's record, in the shared results folder
            EXPECT_TRUE(fs::exists(scratch.dir / "runs/1/jobs/0.0.record.json"));
        }
        EXPECT_TRUE(rig::test::processes_mentioning(scratch.dir.string()).empty());
    }
}

} // namespace
