// SPDX-License-Identifier: MIT
// rig watch with fakes where it meets the machine: a tester that stores samples a test
// decides per commit, and a bisector that ends as a test scripts it. The branch is a real
// git repository in a scratch folder and the state a real SQLite file, so that rounds,
// force-pushes, path filters, dedupe, fixes and resumes are exercised as they run.
#include "core/matrix.hpp"
#include "git_run.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"
#include "watch/detect.hpp"
#include "watch/history.hpp"
#include "watch/mail.hpp"
#include "watch/watch.hpp"

#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <sstream>

namespace fs = std::filesystem;
using namespace rig;

namespace {

core::Sample sample_of(double seconds, double walks, core::Outcome outcome = core::Outcome::ok) {
    core::Sample sample;
    sample.outcome = outcome;
    sample.guest_seconds = seconds;
    sample.metrics.push_back({"9p.work.walk", walks, ""});
    return sample;
}

bisect::Criterion criterion(const std::string& text) {
    auto parsed = bisect::parse_criterion(text);
    EXPECT_TRUE(parsed) << text;
    return parsed ? *parsed : bisect::Criterion{};
}

TEST(WatchScreen, AnExactCountThatJumpsIsSuspectedFromOneSampleEach) {
    auto detail = watch::screen(criterion("metric:9p.work.walk:+20%"), {sample_of(1, 72)},
                                {sample_of(1, 1393)});
    ASSERT_TRUE(detail);
    EXPECT_NE(detail->find("72.000 -> 1393.000"), std::string::npos) << *detail;
    EXPECT_FALSE(watch::screen(criterion("metric:9p.work.walk:+20%"), {sample_of(1, 72)},
                               {sample_of(1, 80)}));
    // A drop is no rise; written as one, it is.
    EXPECT_FALSE(watch::screen(criterion("metric:9p.work.walk:+20%"), {sample_of(1, 72)},
                               {sample_of(1, 10)}));
    EXPECT_TRUE(watch::screen(criterion("metric:9p.work.walk:-20%"), {sample_of(1, 72)},
                              {sample_of(1, 10)}));
}

TEST(WatchScreen, VaryingTimingsNeedTheRankTestNotJustTheThreshold) {
    // +15% on medians, but within the noise of both sides: not significant.
    std::vector<core::Sample> before{sample_of(10, 1), sample_of(12, 1), sample_of(9, 1)};
    std::vector<core::Sample> noisy{sample_of(11.5, 1), sample_of(8.5, 1), sample_of(14, 1)};
    EXPECT_FALSE(watch::screen(criterion("duration:+10%"), before, noisy));
    std::vector<core::Sample> slower{sample_of(15, 1), sample_of(15.5, 1), sample_of(16, 1)};
    EXPECT_TRUE(watch::screen(criterion("duration:+10%"), before, slower));
}

TEST(WatchScreen, ErrorsAreNewFamiliesOrAWorseOutcome) {
    core::Sample failed = sample_of(1, 1, core::Outcome::errors);
    failed.lines.push_back(
        {core::Severity::error, "workload", "cat: units/unit_2.c: Bad file descriptor", ""});
    core::Sample other = failed;
    other.lines[0].line = "cat: main.c: Bad file descriptor";
    // The same family on another file is not new.
    EXPECT_FALSE(watch::screen(criterion("errors"), {failed}, {other}));
    auto detail = watch::screen(criterion("errors"), {sample_of(1, 1)}, {other});
    ASSERT_TRUE(detail);
    EXPECT_NE(detail->find("a new error"), std::string::npos) << *detail;
    auto worse = watch::screen(criterion("errors"), {sample_of(1, 1)},
                               {sample_of(0, 0, core::Outcome::kernel_panic)});
    ASSERT_TRUE(worse);
    EXPECT_NE(worse->find("kernel-panic"), std::string::npos) << *worse;
    // errors leaves panics and hangs aside: the bisect asks about the outcome itself.
    EXPECT_EQ(watch::bisect_criterion("errors", *worse), "outcome:panic");
    auto hung = watch::screen(criterion("errors"), {sample_of(1, 1)},
                              {sample_of(0, 0, core::Outcome::workload_timeout)});
    ASSERT_TRUE(hung);
    EXPECT_EQ(watch::bisect_criterion("errors", *hung), "outcome:hang");
    // Wrong output, even where nothing printed an error: the bisect on output follows it.
    auto wrong = watch::screen(criterion("output"), {sample_of(1, 1)},
                               {sample_of(1, 1, core::Outcome::wrong_output)});
    ASSERT_TRUE(wrong);
    EXPECT_EQ(watch::bisect_criterion("errors", *wrong), "outcome:wrong-output");
    EXPECT_EQ(watch::bisect_criterion("errors", *detail), "errors");
    EXPECT_EQ(watch::bisect_criterion("metric:9p.work.walk:+20%", "9p.work.walk 1 -> 2"),
              "metric:9p.work.walk:+20%");
    // Samples the machinery lost say nothing.
    EXPECT_FALSE(watch::screen(criterion("errors"), {sample_of(1, 1)},
                               {sample_of(0, 0, core::Outcome::infra_error)}));
}

TEST(WatchMail, IsAnMboxMessageWithEncodedHeadersAndTheTags) {
    watch::Report report;
    report.from = "rig robot <rig@example.org>";
    report.to = "Jörg Dev <jorg@example.org>";
    report.cc = {"v9fs@lists.linux.dev", "regressions@lists.linux.dev"};
    report.tree = "linux";
    report.branch = "master";
    report.repo = "https://git.example.org/linux.git";
    report.head = std::string(40, 'b');
    report.criterion = "metric:9p.work.walk:+50%";
    report.cell_filter = "kernel=linux,config=base,cache=loose,fs=9p";
    report.finding.culprit = std::string(40, 'c');
    report.finding.subject = "9p: keep fewer dentries";
    report.finding.headline = "1835.0% regression of 9p.work.walk";
    report.finding.parent = std::string(40, 'a');
    report.bisect_log = "git bisect start\nFrom the start of a line\n";
    report.scenario_file = "watch.yaml";
    report.scenario_text = "name: w\n";
    report.archive = "https://lore.example.org/r/";
    auto mail = watch::compose(report);
    ASSERT_TRUE(mail);
    const std::string& text = mail->text;
    EXPECT_EQ(text.rfind("From " + report.finding.culprit + " Mon Sep 17 00:00:00 2001\n", 0), 0u);
    EXPECT_NE(text.find("To: =?UTF-8?B?"), std::string::npos) << text;
    EXPECT_NE(text.find("<jorg@example.org>"), std::string::npos) << text;
    EXPECT_NE(text.find("Subject: [linux:master] cccccccccccc 9p: keep fewer dentries: 1835.0% "
                        "regression of 9p.work.walk\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Message-ID: <" + mail->message_id + ">"), std::string::npos);
    EXPECT_NE(text.find("| Closes: https://lore.example.org/r/" + mail->message_id),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("#regzbot introduced: cccccccccccc"), std::string::npos) << text;
    // A body line that an mbox reader would take for the next message is quoted.
    EXPECT_EQ(text.find("\nFrom the start"), std::string::npos) << text;
    // The same report again is the same message.
    EXPECT_EQ(watch::compose(report)->message_id, mail->message_id);
}

// A branch in a scratch repository: commits with a fixed identity, each touching a file.
class Repo {
public:
    explicit Repo(const fs::path& dir) : m_dir(dir) {
        test::git(dir, {"init", "--quiet", "-b", "master"});
    }
    std::string commit(const std::string& file, const std::string& message) {
        fs::create_directories((m_dir / file).parent_path());
        std::ofstream(m_dir / file, std::ios::app) << message << "\n";
        test::git(m_dir, {"add", "-A"});
        test::git(m_dir, {"commit", "--quiet", "-m", message});
        return test::git(m_dir, {"rev-parse", "HEAD"});
    }
    // A commit that changes no file: one git process less than commit(), for the noise tests'
    // hundreds of heads.
    std::string empty_commit(const std::string& message) {
        test::git(m_dir, {"commit", "--quiet", "--allow-empty", "-m", message});
        return test::git(m_dir, {"rev-parse", "HEAD"});
    }
    void reset(const std::string& commit) {
        test::git(m_dir, {"reset", "--quiet", "--hard", commit});
    }
    const fs::path& dir() const { return m_dir; }

private:
    fs::path m_dir;
};

// Stores a run of the scenario's cells at a commit with the samples `samples_at` gives.
class FakeTester final : public watch::Tester {
public:
    FakeTester(store::Database& db, std::function<std::vector<core::Sample>(const std::string&)> at)
        : m_db(db), m_at(std::move(at)) {}

    Expected<int64_t> test(const core::Scenario& scenario, const std::string& commit) override {
        tested.push_back(commit);
        store::RunInfo run;
        run.scenario_name = scenario.name;
        run.scenario_text = scenario.text + "\n# " + commit;
        run.host_facts = R"({"qemu": ")" + qemu + R"(", "accel": "tcg"})";
        run.rig_version = "test";
        int64_t id = RIG_TRY(m_db.begin_run(run));
        std::vector<core::Cell> cells = RIG_TRY(core::expand(scenario));
        RIG_TRY(m_db.add_cells(id, cells));
        int repetition = 0;
        for (core::Sample sample : m_at(commit)) {
            sample.cell_id = cells.front().id;
            sample.repetition = repetition++;
            RIG_TRY(m_db.add_sample(id, sample));
        }
        RIG_TRY(m_db.finish_run(id, core::RunStatus::finished));
        return id;
    }

    std::vector<std::string> tested;
    std::string qemu = "7.2.22";

private:
    store::Database& m_db;
    std::function<std::vector<core::Sample>(const std::string&)> m_at;
};

// Ends each bisect as `end` says, naming `culprit`.
class FakeBisector final : public watch::Bisector {
public:
    Expected<int64_t> create(const watch::BisectRequest& request) override {
        requests.push_back(request);
        return static_cast<int64_t>(requests.size());
    }
    Expected<watch::BisectEnd> run(int64_t) override {
        return watch::BisectEnd{end, end == core::BisectStatus::culprit ? culprit : "", "scripted"};
    }
    Expected<bisect::CulpritFinding> finding(int64_t) override {
        bisect::CulpritFinding found;
        found.culprit = culprit;
        found.subject = "the culprit";
        found.author = "Dev <dev@example.org>";
        found.headline = "100.0% regression of 9p.work.walk";
        return found;
    }
    Expected<std::string> log(int64_t) override { return std::string("git bisect start\n"); }
    Expected<void> reproducer(int64_t, const std::string&, const fs::path& tarball) override {
        if (!packs)
            return fail(ErrorKind::infra, "no recipe");
        return util::write_file_atomically(tarball, "packed");
    }

    std::vector<watch::BisectRequest> requests;
    bool packs = true;
    core::BisectStatus end = core::BisectStatus::culprit;
    std::string culprit;
};

class WatchRound : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(m_dir.path() / "linux");
        repo = std::make_unique<Repo>(m_dir.path() / "linux");
        base = repo->commit("fs/9p/a.c", "base");
        auto opened = store::Database::open(m_dir.path() / "rig.db");
        ASSERT_TRUE(opened);
        db = std::move(*opened);
        tester = std::make_unique<FakeTester>(*db, [this](const std::string& commit) {
            if (panicked.count(commit))
                return std::vector<core::Sample>{sample_of(0, 0, core::Outcome::kernel_panic)};
            double walks = regressed.count(commit) ? 1500 : 720;
            if (auto set = walks_at.find(commit); set != walks_at.end())
                walks = set->second;
            return std::vector<core::Sample>{sample_of(5, walks)};
        });
        settings.tester = tester.get();
        settings.bisector = &bisector;
        settings.environment = [this](int64_t run_id) -> Expected<std::string> {
            auto run = RIG_TRY(db->run(run_id));
            return run->host_facts;
        };
        settings.send = [this](const std::vector<std::string>& argv) -> Expected<void> {
            sent.push_back(argv);
            return {};
        };
    }

    core::Scenario scenario(const std::string& watch_extra = "") {
        std::string text = "name: w\nkernels:\n  - {name: linux, git: " + repo->dir().string() +
                           ", ref: master, config: [base]}\n"
                           "watch:\n  branch: master\n"
                           "  criteria: [errors, 'metric:9p.work.walk:+20%']\n"
                           "  outbox: " +
                           (m_dir.path() / "outbox").string() + "\n  send: [mailer, --now]\n" +
                           "  dashboard: " + (m_dir.path() / "dashboard").string() + "\n" +
                           watch_extra;
        auto parsed = spec::parse_scenario(text, "w.yaml");
        EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message);
        return parsed ? *parsed : core::Scenario{};
    }

    watch::RoundResult round(const core::Scenario& s) {
        std::ostringstream log;
        auto result = watch::run_round(s, *db, settings, m_interrupted, log);
        EXPECT_TRUE(result) << (result ? "" : result.error().message) << log.str();
        this->log += log.str();
        return result ? *result : watch::RoundResult{};
    }

    size_t mails() const {
        fs::path outbox = m_dir.path() / "outbox";
        if (!fs::exists(outbox))
            return 0;
        return static_cast<size_t>(
            std::count_if(fs::directory_iterator(outbox), {}, [](const fs::directory_entry& entry) {
                return entry.path().extension() == ".mbox";
            }));
    }

    test::TempDir m_dir;
    std::atomic<bool> m_interrupted{false};
    std::unique_ptr<Repo> repo;
    std::string base;
    std::unique_ptr<store::Database> db;
    std::set<std::string> regressed;
    std::map<std::string, double> walks_at; // over regressed's 1500 and the others' 720
    std::set<std::string> panicked;
    std::unique_ptr<FakeTester> tester;
    FakeBisector bisector;
    watch::Settings settings;
    std::vector<std::vector<std::string>> sent;
    std::string log;
};

TEST_F(WatchRound, ARegressionIsBisectedReportedOnceLinkedLaterAndFixed) {
    core::Scenario s = scenario();
    EXPECT_EQ(round(s).status, core::HeadStatus::good);
    EXPECT_NE(log.find("the first head: the baseline"), std::string::npos) << log;
    EXPECT_EQ(round(s).end, watch::RoundEnd::nothing_moved);

    std::string harmless = repo->commit("fs/9p/b.c", "harmless");
    EXPECT_EQ(round(s).status, core::HeadStatus::good);

    // Several pushes since the last round: only the newest head is tested.
    std::string culprit = repo->commit("fs/9p/a.c", "culprit");
    std::string after = repo->commit("fs/9p/c.c", "after");
    regressed = {culprit, after};
    bisector.culprit = culprit;
    auto found = round(s);
    EXPECT_EQ(found.status, core::HeadStatus::bad);
    EXPECT_EQ(found.reports, 1);
    EXPECT_EQ(tester->tested.back(), after);
    ASSERT_EQ(bisector.requests.size(), 1u);
    EXPECT_EQ(bisector.requests[0].good, harmless);
    EXPECT_EQ(bisector.requests[0].bad, after);
    EXPECT_EQ(bisector.requests[0].criterion, "metric:9p.work.walk:+20%");
    EXPECT_EQ(bisector.requests[0].cell, "kernel=linux,config=base,fs=9p");
    EXPECT_EQ(mails(), 1u);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].front(), "mailer");
    // The reproducer is packed beside the mail before it, and the mail says how to use it.
    const fs::path mbox = sent[0].back();
    std::string reproducer = mbox.stem().string() + ".repro.tar.gz";
    EXPECT_EQ(util::read_file(mbox.parent_path() / reproducer), "packed");
    const std::string text = util::read_file(mbox);
    EXPECT_NE(text.find("the tarball next to this mail,\n\n\t" + reproducer + "\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("tar xf " + reproducer + " && " + mbox.stem().string() + ".repro/run.sh"),
              std::string::npos)
        << text;

    // Still regressed on the next head: linked, no bisect, no mail.
    std::string later = repo->commit("fs/9p/d.c", "later");
    regressed.insert(later);
    auto still = round(s);
    EXPECT_EQ(still.status, core::HeadStatus::bad);
    EXPECT_EQ(still.reports, 0);
    EXPECT_EQ(bisector.requests.size(), 1u);
    EXPECT_EQ(mails(), 1u);
    EXPECT_EQ(sent.size(), 1u);

    // Fixed: the history says by which head.
    std::string fix = repo->commit("fs/9p/a.c", "fix");
    EXPECT_EQ(round(s).status, core::HeadStatus::good);
    auto regressions = db->watch_regressions(watch::watch_name(s));
    ASSERT_TRUE(regressions);
    ASSERT_EQ(regressions->size(), 1u);
    EXPECT_EQ((*regressions)[0].status, core::RegressionStatus::fixed);
    EXPECT_EQ((*regressions)[0].fixed_in, fix);
    EXPECT_EQ((*regressions)[0].culprit, culprit);

    // The dashboard followed: a trend per cell and watched metric, the regression found
    // and fixed on it, its mail linked from the page's folder.
    std::string page = util::read_file(m_dir.path() / "dashboard" / "index.html");
    EXPECT_NE(page.find("<svg id=\"trend-0\""), std::string::npos) << page;
    EXPECT_NE(page.find("9p.work.walk of "), std::string::npos);
    EXPECT_NE(page.find("<g class=\"found\" data-head=\"" + after.substr(0, 12)),
              std::string::npos);
    EXPECT_NE(page.find("<g class=\"fixed\" data-head=\"" + fix.substr(0, 12)), std::string::npos);
    EXPECT_NE(page.find("<a href=\"../outbox/" + culprit.substr(0, 12)), std::string::npos) << page;
    // And `rig report --history` prints the same history as text.
    auto history = watch::load_history(s, *db);
    ASSERT_TRUE(history) << history.error().message;
    EXPECT_EQ(history->heads.size(), 5u);
    ASSERT_EQ(history->trends.size(), 1u);
    EXPECT_EQ(history->trends[0].points[2].value, 1500);
    EXPECT_EQ(history->trends[0].points[4].value, 720);
    EXPECT_NE(report::history_text(*history).find("found metric:9p.work.walk:+20%: culprit " +
                                                  culprit.substr(0, 12)),
              std::string::npos)
        << report::history_text(*history);
    // One cell's history (`--cell`), and a filter no cell of the heads matches.
    auto one = watch::load_history(s, *db, {"kernel=linux"});
    ASSERT_TRUE(one) << one.error().message;
    ASSERT_EQ(one->trends.size(), 1u);
    EXPECT_EQ(one->trends[0].points[2].value, 1500);
    EXPECT_EQ(one->trends[0].points[2].n, history->trends[0].points[2].n);
    auto none = watch::load_history(s, *db, {"kernel=other"});
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("no cell 'kernel=other'"), std::string::npos)
        << none.error().message;
}

// A head that no longer shows the regression against the good heads is its fix only once
// the head it was found on is worse than it by the criterion too: a figure between both
// sides (noise, or half a fix) fixes nothing.
TEST_F(WatchRound, AHeadBetweenGoodAndRegressedIsNoFix) {
    core::Scenario s = scenario();
    round(s);
    std::string culprit = repo->commit("fs/9p/a.c", "culprit");
    walks_at[culprit] = 870; // +20.8 % against 720
    bisector.culprit = culprit;
    EXPECT_EQ(round(s).reports, 1);
    std::string between = repo->commit("fs/9p/b.c", "between");
    walks_at[between] = 800; // +11 % against the good heads, and 870 only +8.8 % over it
    EXPECT_EQ(round(s).status, core::HeadStatus::good);
    auto regressions = db->watch_regressions(watch::watch_name(s));
    ASSERT_TRUE(regressions);
    ASSERT_EQ(regressions->size(), 1u);
    EXPECT_EQ((*regressions)[0].status, core::RegressionStatus::open);
    EXPECT_NE(log.find("not better than " + culprit.substr(0, 12)), std::string::npos) << log;
    std::string fix = repo->commit("fs/9p/a.c", "fix");
    round(s);
    regressions = db->watch_regressions(watch::watch_name(s));
    ASSERT_TRUE(regressions);
    EXPECT_EQ((*regressions)[0].status, core::RegressionStatus::fixed);
    EXPECT_EQ((*regressions)[0].fixed_in, fix);
}

TEST_F(WatchRound, AReproducerThatCannotBePackedLeavesTheMailWithoutIt) {
    core::Scenario s = scenario();
    round(s);
    std::string culprit = repo->commit("fs/9p/a.c", "culprit");
    regressed = {culprit};
    bisector.culprit = culprit;
    bisector.packs = false;
    EXPECT_EQ(round(s).reports, 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_NE(log.find("no reproducer beside the mail: no recipe"), std::string::npos) << log;
    const std::string text = util::read_file(sent[0].back());
    EXPECT_EQ(text.find("Without rig,"), std::string::npos) << text;
    EXPECT_NE(text.find("#regzbot introduced: " + culprit.substr(0, 12)), std::string::npos);
}

TEST_F(WatchRound, ASuspectFreshSamplesDoNotConfirmIsNotReported) {
    core::Scenario s = scenario();
    round(s);
    std::string noisy = repo->commit("fs/9p/b.c", "noisy");
    regressed = {noisy};
    bisector.end = core::BisectStatus::not_reproducible;
    auto result = round(s);
    EXPECT_EQ(result.status, core::HeadStatus::good);
    EXPECT_EQ(result.reports, 0);
    EXPECT_EQ(mails(), 0u);
    EXPECT_NE(log.find("not confirmed"), std::string::npos) << log;
}

// Unattended, a bisect must end: the scenario's cost cap goes with each, and one that
// reaches it is logged and leaves the head suspect, with no mail.
TEST_F(WatchRound, ABisectEndedByItsCostCapIsLoggedAndNotMailed) {
    core::Scenario s =
        scenario("  max_bisect_builds: 4\n  max_bisect_boots: 40\n  max_bisect_time: 90m\n");
    round(s);
    std::string slow = repo->commit("fs/9p/b.c", "slow");
    regressed = {slow};
    bisector.end = core::BisectStatus::capped;
    auto result = round(s);
    EXPECT_EQ(result.status, core::HeadStatus::suspect);
    EXPECT_EQ(result.reports, 0);
    EXPECT_EQ(mails(), 0u);
    ASSERT_EQ(bisector.requests.size(), 1u);
    EXPECT_EQ(bisector.requests[0].max_builds, 4);
    EXPECT_EQ(bisector.requests[0].max_boots, 40);
    EXPECT_DOUBLE_EQ(bisector.requests[0].max_hours, 1.5);
    EXPECT_NE(log.find("ended at its scripted"), std::string::npos) << log;
    auto heads = db->watch_heads(watch::watch_name(s));
    ASSERT_TRUE(heads);
    ASSERT_EQ(heads->back().commit, slow);
    auto findings = db->watch_findings(heads->back().id);
    ASSERT_TRUE(findings);
    ASSERT_FALSE(findings->empty());
    EXPECT_EQ(findings->front().status, core::FindingStatus::stopped);
}

// Under errors the bisect leaves panics aside as unusable: the watch bisects a head that
// panics where its baseline ran on the outcome itself.
TEST_F(WatchRound, APanicIsBisectedOnTheOutcomeItself) {
    core::Scenario s = scenario();
    round(s);
    std::string oops = repo->commit("fs/9p/b.c", "oops");
    panicked = {oops};
    bisector.culprit = oops;
    auto found = round(s);
    EXPECT_EQ(found.status, core::HeadStatus::bad);
    ASSERT_EQ(bisector.requests.size(), 1u);
    EXPECT_EQ(bisector.requests[0].criterion, "outcome:panic");
    EXPECT_EQ(found.reports, 1);
    EXPECT_NE(log.find("on outcome:panic"), std::string::npos) << log;
}

TEST_F(WatchRound, AForcePushIsHeldAgainstTheNewestGoodAncestor) {
    core::Scenario s = scenario();
    round(s);
    std::string kept = repo->commit("fs/9p/b.c", "kept");
    round(s);
    repo->commit("fs/9p/c.c", "dropped later");
    round(s);
    repo->reset(kept);
    std::string rewritten = repo->commit("fs/9p/c.c", "rewritten");
    regressed = {rewritten};
    bisector.culprit = rewritten;
    auto result = round(s);
    EXPECT_NE(log.find("force-push"), std::string::npos) << log;
    ASSERT_EQ(bisector.requests.size(), 1u);
    EXPECT_EQ(bisector.requests[0].good, kept);
    EXPECT_EQ(result.reports, 1);
}

TEST_F(WatchRound, HeadsThatTouchNoWatchedPathAreSkipped) {
    core::Scenario s = scenario("  paths: [fs/9p]\n");
    round(s);
    repo->commit("mm/x.c", "elsewhere");
    auto skipped = round(s);
    EXPECT_EQ(skipped.end, watch::RoundEnd::skipped);
    EXPECT_EQ(tester->tested.size(), 1u);
    repo->commit("fs/9p/b.c", "here");
    EXPECT_EQ(round(s).end, watch::RoundEnd::tested);
    EXPECT_EQ(tester->tested.size(), 2u);
}

TEST_F(WatchRound, ANewEnvironmentStartsANewBaselineInsteadOfBlamingACommit) {
    core::Scenario s = scenario();
    round(s);
    std::string next = repo->commit("fs/9p/b.c", "next");
    regressed = {next};
    tester->qemu = "8.0.0";
    auto result = round(s);
    EXPECT_EQ(result.status, core::HeadStatus::good);
    EXPECT_TRUE(bisector.requests.empty());
    EXPECT_NE(log.find("a new environment"), std::string::npos) << log;
}

TEST_F(WatchRound, ABadCriterionIsAConfigErrorAtItsPlace) {
    core::Scenario s = scenario();
    s.watch->criteria = {{"metric", {7, 15}, "watch.criteria[0]"}};
    std::ostringstream out;
    auto result = watch::run_round(s, *db, settings, m_interrupted, out);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, ErrorKind::config);
    EXPECT_NE(result.error().message.find("w.yaml:7:15"), std::string::npos)
        << result.error().message;
}

} // namespace

namespace {

// Real samples of one cell, taken under TCG on a two-core machine (tests/data/watch/
// README.md says how): each line its guest seconds and exact 9p request counts.
std::vector<core::Sample> real_samples() {
    const char* data = std::getenv("RIG_TEST_DATA");
    std::ifstream in(fs::path(data ? data : "tests/data") / "watch" / "tcg-samples.tsv");
    std::vector<core::Sample> out;
    std::string header;
    std::getline(in, header);
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        double seconds = 0, walks = 0, getattrs = 0;
        if (!(fields >> seconds >> walks >> getattrs))
            continue;
        core::Sample sample = sample_of(seconds, walks);
        sample.metrics.push_back({"9p.work.getattr", getattrs, ""});
        out.push_back(sample);
    }
    return out;
}

// The bisect's confirmation as the watch meets it: fresh samples of both sides, drawn
// from the real pool (the bad side with `planted` applied), held by the bisect's own
// endpoint rules. A confirmed suspect is bisected to `culprit`, the first planted head (as
// a real bisect would find it), or to its bad end when nothing was planted.
class ResamplingBisector final : public watch::Bisector {
public:
    ResamplingBisector(const std::vector<core::Sample>& pool, std::mt19937& random,
                       std::function<core::Sample(core::Sample)> planted,
                       const std::string& culprit)
        : m_pool(pool), m_random(random), m_planted(std::move(planted)), m_culprit(culprit) {}

    Expected<int64_t> create(const watch::BisectRequest& request) override {
        m_requests.push_back(request);
        return static_cast<int64_t>(m_requests.size());
    }
    Expected<watch::BisectEnd> run(int64_t id) override {
        const watch::BisectRequest& request = m_requests.at(static_cast<size_t>(id - 1));
        bisect::Criterion criterion = RIG_TRY(bisect::parse_criterion(request.criterion));
        bisect::Calibration calibration;
        for (int i = 0; i < request.samples; ++i) {
            calibration.good.push_back(value(criterion, draw()));
            calibration.bad.push_back(value(criterion, m_planted(draw())));
        }
        bool confirmed = criterion.kind == bisect::CriterionKind::duration
                             ? !bisect::check_duration_endpoints(calibration, criterion.threshold)
                             : !bisect::plan_metric(criterion, calibration).problem;
        return watch::BisectEnd{confirmed ? core::BisectStatus::culprit
                                          : core::BisectStatus::not_reproducible,
                                culprit_of(request), ""};
    }
    Expected<bisect::CulpritFinding> finding(int64_t id) override {
        bisect::CulpritFinding found;
        found.culprit = culprit_of(m_requests.at(static_cast<size_t>(id - 1)));
        found.subject = "head";
        found.author = "Dev <dev@example.org>";
        found.headline = "a regression";
        return found;
    }
    Expected<std::string> log(int64_t) override { return std::string(); }
    Expected<void> reproducer(int64_t, const std::string&, const fs::path&) override {
        return fail(ErrorKind::infra, "no reproducer in this test");
    }
    size_t bisects() const { return m_requests.size(); }

private:
    std::string culprit_of(const watch::BisectRequest& request) const {
        return m_culprit.empty() ? request.bad : m_culprit;
    }

    core::Sample draw() {
        std::uniform_int_distribution<size_t> pick(0, m_pool.size() - 1);
        return m_pool[pick(m_random)];
    }
    static double value(const bisect::Criterion& criterion, const core::Sample& sample) {
        return bisect::measured_value(criterion, sample).value_or(0);
    }

    const std::vector<core::Sample>& m_pool;
    std::mt19937& m_random;
    std::function<core::Sample(core::Sample)> m_planted;
    const std::string& m_culprit;
    std::vector<watch::BisectRequest> m_requests;
};

// Heads that change nothing, each tested with samples drawn from the real pool, under
// duration:+10% and the request counts: no report. Then a planted slowdown of 50% and a
// planted rise of the walk count by half, from one head on: each reported once.
class WatchNoise : public WatchRound {
protected:
    // `repeat` samples per head, `samples` per side when a suspect is confirmed.
    size_t reports_over_heads(int heads, const std::string& planted_at,
                              std::function<core::Sample(core::Sample)> planted, int repeat = 3,
                              int samples = 3) {
        std::vector<core::Sample> pool = real_samples();
        EXPECT_GE(pool.size(), 20u) << "tests/data/watch/tcg-samples.tsv";
        if (pool.empty())
            return 0;
        std::mt19937 random(20261204);
        std::set<std::string> bad_heads;
        std::string first_bad;
        FakeTester draws(*db, [&](const std::string& commit) {
            std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
            std::vector<core::Sample> out;
            for (int i = 0; i < repeat; ++i) {
                core::Sample sample = pool[pick(random)];
                out.push_back(bad_heads.count(commit) ? planted(sample) : sample);
            }
            return out;
        });
        ResamplingBisector bisector(pool, random, planted, first_bad);
        settings.tester = &draws;
        settings.bisector = &bisector;
        core::Scenario s = scenario();
        s.watch->samples = samples;
        s.watch->criteria = {{"errors", {}, ""},
                             {"duration:+10%", {}, ""},
                             {"metric:9p.work.walk:+20%", {}, ""},
                             {"metric:9p.work.getattr:+20%", {}, ""}};
        size_t reports = 0;
        round(s);
        for (int i = 0; i < heads; ++i) {
            std::string head = repo->empty_commit("head " + std::to_string(i));
            // From the planted head on, every head carries it.
            if (std::to_string(i) == planted_at)
                first_bad = head;
            if (!first_bad.empty())
                bad_heads.insert(head);
            reports += static_cast<size_t>(round(s).reports);
        }
        std::cout << "[ measured ] " << heads << " heads: " << bisector.bisects()
                  << " suspects confirmed or not by fresh samples, " << reports << " reports\n";
        return reports;
    }
};

TEST_F(WatchNoise, AHundredCleanHeadsOfRealTcgSamplesGiveNoReport) {
    EXPECT_EQ(reports_over_heads(100, "", [](core::Sample s) { return s; }), 0u) << log;
}

// TCG's timings spread widely (8.1 to 15.5 s in the pool): a slowdown is told from them
// with five samples a head and five a side, where an exact count needs one.
TEST_F(WatchNoise, APlantedSlowdownIsReportedOnce) {
    auto slower = [](core::Sample s) {
        s.guest_seconds *= 1.5;
        return s;
    };
    EXPECT_EQ(reports_over_heads(10, "4", slower, 5, 5), 1u) << log;
}

TEST_F(WatchNoise, FiftyCleanHeadsOfFiveSamplesGiveNoReportEither) {
    EXPECT_EQ(reports_over_heads(
                  50, "", [](core::Sample s) { return s; }, 5, 5),
              0u)
        << log;
}

TEST_F(WatchNoise, APlantedRiseOfACountIsReportedOnce) {
    auto more_walks = [](core::Sample s) {
        for (core::Metric& metric : s.metrics)
            if (metric.name == "9p.work.walk")
                metric.value *= 1.5;
        return s;
    };
    EXPECT_EQ(reports_over_heads(10, "4", more_walks), 1u) << log;
}

} // namespace
