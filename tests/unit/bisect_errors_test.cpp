// SPDX-License-Identifier: MIT
// The errors criterion when a failure prints a different line each run (seed 004's kind):
// error families of real gcc, make, ld and kernel lines; BAD's failures held against
// GOOD's; the report of a bisect that did not verify; and 1,000 simulated bisects with
// random culprits, reproduction rates and operands, and a flaky unrelated error, run
// through the driver's own rules.
#include "bisect/context.hpp"
#include "bisect/report.hpp"
#include "bisect/verdict.hpp"
#include "core/evidence.hpp"
#include "core/matrix.hpp"
#include "git_run.hpp"
#include "proc/process.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <random>

using namespace rig::bisect;
using rig::core::family_of;
using rig::core::Outcome;
using rig::core::Sample;
using rig::core::Severity;
using rig::core::Verdict;
namespace fs = std::filesystem;

namespace {

// A sample whose workload printed `lines` (errors), failed when there are any.
Sample failing(const std::vector<std::string>& lines, const std::string& source = "workload") {
    Sample out;
    out.outcome = lines.empty() ? Outcome::ok : Outcome::workload_failed;
    for (const auto& line : lines)
        out.lines.push_back({Severity::error, source, line, rig::core::signature_of(line)});
    return out;
}

Sample ok() {
    return failing({});
}

const Criterion k_errors = *parse_criterion("errors");

} // namespace

TEST(ErrorFamily, AnErrnoMetOnOtherFilesByOtherProgramsIsOneFamily) {
    const std::string family = "*: Bad file descriptor";
    for (const char* line :
         {"units/unit_1.c:3:10: fatal error: include/common_0.h: Bad file descriptor",
          "include/common_0.h:1:10: fatal error: "
          "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h: Bad file descriptor",
          "main.c:12:1: fatal error: stdio.h: Bad file descriptor",
          "cc1: fatal error: units/unit_3.c: Bad file descriptor",
          "/usr/bin/ld: cannot open output file app: Bad file descriptor",
          "sh: 1: cannot open units/unit_2.c: Bad file descriptor",
          "cat: include/common_1.h: Bad file descriptor"})
        EXPECT_EQ(family_of(line), family) << line;
    // Another errno is another family; the signature still tells the lines apart.
    EXPECT_EQ(family_of("units/unit_1.c:3:10: fatal error: x.h: Input/output error"),
              "*: Input/output error");
    EXPECT_NE(
        rig::core::signature_of("units/unit_1.c:3:10: fatal error: a.h: Bad file descriptor"),
        rig::core::signature_of("units/unit_2.c:3:10: fatal error: b/c.h: Bad file descriptor"));
}

TEST(ErrorFamily, CompilerDiagnosticsLoseTheirLocationNotTheirMessage) {
    EXPECT_EQ(
        family_of("units/unit_2.c:9:5: error: 'count' undeclared (first use in this function)"),
        "error: 'count' undeclared (first use in this function)");
    EXPECT_EQ(family_of("include/common_3.h:4:1: error: expected ';' before '}' token"),
              family_of("units/unit_7.c:40:12: error: expected ';' before '}' token"));
    // Identifiers are not operands: another undeclared name is another bug.
    EXPECT_NE(family_of("a.c:1:1: error: 'x' undeclared (first use in this function)"),
              family_of("a.c:1:1: error: 'y' undeclared (first use in this function)"));
    EXPECT_EQ(family_of("Input/output error"), "Input/output error");
}

TEST(ErrorFamily, MakeAndLinkerLines) {
    EXPECT_EQ(family_of("make: *** [Makefile:12: units/unit_1.o] Error 1"),
              "make: *** [Makefile:N: <path>] Error N");
    EXPECT_EQ(family_of("make[2]: *** [Makefile:250: fs/9p/vfs_file.o] Error 1"),
              family_of("make[1]: *** [Makefile:7: units/unit_3.o] Error 2"));
    EXPECT_EQ(family_of("make: *** No rule to make target 'include/x.h', needed by "
                        "'units/unit_1.o'.  Stop."),
              "make: *** No rule to make target '<path>', needed by '<path>'. Stop.");
    EXPECT_EQ(family_of("/usr/bin/ld: cannot find -lrig: No such file or directory"),
              "*: No such file or directory");
    EXPECT_EQ(family_of("/usr/bin/ld: units/unit_1.o: in function `main':"),
              family_of("/usr/bin/ld: units/unit_4.o: in function `main':"));
    EXPECT_EQ(family_of("/usr/bin/ld: unit_1.c:(.text+0x1d): undefined reference to `helper_3'"),
              "<path>:(.text+0x?): undefined reference to `helper_N'");
    EXPECT_EQ(family_of("collect2: error: ld returned 1 exit status"),
              "collectN: error: ld returned N exit status");
}

TEST(ErrorFamily, KernelLinesKeepWhereTheCheckFired) {
    // printk's time stamp and level go, the WARN's location stays, its registers go.
    std::string warn = family_of("<4>[   12.345678] WARNING: CPU: 1 PID: 231 at "
                                 "fs/9p/vfs_file.c:412 v9fs_file_open+0x1c/0x80 [9p]");
    EXPECT_EQ(warn, "WARNING: CPU: N PID: N at fs/Np/vfs_file.c:N vNfs_file_open+0x?/0x? [Np]");
    EXPECT_EQ(warn, family_of("[    3.000001] WARNING: CPU: 0 PID: 77 at fs/9p/vfs_file.c:413 "
                              "v9fs_file_open+0x2c/0x80 [9p]"));
    EXPECT_NE(warn, family_of("WARNING: CPU: 0 PID: 77 at fs/netfs/io.c:41 netfs_rreq+0x2c/0x80"));
    EXPECT_EQ(family_of("kernel BUG at fs/9p/fid.c:96!"), "kernel BUG at fs/Np/fid.c:N!");
    EXPECT_EQ(family_of("BUG: kernel NULL pointer dereference, address: 0000000000000008"),
              family_of("BUG: kernel NULL pointer dereference, address: 0000000000000010"));
    EXPECT_EQ(family_of("Oops: 0002 [#1] PREEMPT SMP NOPTI"), "Oops: N [#N] PREEMPT SMP NOPTI");
    EXPECT_EQ(family_of("BUG: unable to handle page fault for address: ffffc90000123000"),
              "BUG: unable to handle page fault for address: ?");
    EXPECT_EQ(family_of("9pnet: bad fid 4312 in clunk"), "Npnet: bad fid N in clunk");
}

// Seed 004's kind: BAD fails on another file each time, and so does a midpoint that holds
// the bug; the majority signature alone would have called the midpoint clean.
TEST(ErrorModel, FailuresOnOtherFilesAtBadAndAtAMidpointAreTheRegression) {
    std::vector<Sample> bad{
        failing({"include/common_0.h:1:10: fatal error: "
                 "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h: Bad file descriptor",
                 "make: *** [Makefile:9: units/unit_0.o] Error 1"}),
        failing({"include/common_0.h:1:10: fatal error: "
                 "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h: Bad file descriptor"}),
        failing({"units/unit_1.c:2:10: fatal error: include/common_0.h: Bad file descriptor"})};
    std::vector<Sample> good{ok(), ok(), ok(), ok()};
    ErrorModel model = error_model(bad, good);
    ASSERT_FALSE(model.problem) << *model.problem;
    EXPECT_EQ(model.targets, std::set<std::string>{"*: Bad file descriptor"});
    EXPECT_EQ(model.reproduced, 3);
    // One real line per family, never the normalized form.
    std::string told = describe_regression(model);
    EXPECT_NE(told.find("stddef.h: Bad file descriptor (3 of 3 at BAD, 0 of 4 at GOOD)"),
              std::string::npos)
        << told;
    EXPECT_EQ(told.find("xN_N"), std::string::npos) << told;
    for (const char* line : {"units/unit_3.c:2:10: fatal error: include/common_1.h: Bad file "
                             "descriptor",
                             "main.c:4:10: fatal error: units/unit_2.h: Bad file descriptor"})
        EXPECT_EQ(classify_sample(k_errors, failing({line}), model), SampleClass::reproduces)
            << line;
    EXPECT_EQ(classify_sample(k_errors, ok(), model), SampleClass::clean);
}

// The syzkaller lesson: an unrelated flaky failure that GOOD shows too steers nothing.
TEST(ErrorModel, AFlakyErrorThatGoodShowsTooIsStray) {
    const std::string flake = "as: units/unit_2.o: Input/output error";
    const std::string regression = "units/unit_1.c:2:10: fatal error: x.h: Bad file descriptor";
    std::vector<Sample> bad{failing({regression}), failing({regression, flake}),
                            failing({regression}), failing({flake})};
    std::vector<Sample> good{ok(), failing({"as: units/unit_0.o: Input/output error"}), ok(), ok(),
                             ok(), failing({"as: units/unit_3.o: Input/output error"})};
    ErrorModel model = error_model(bad, good);
    ASSERT_FALSE(model.problem) << *model.problem;
    EXPECT_EQ(model.targets, std::set<std::string>{family_of(regression)});
    EXPECT_EQ(model.baseline, std::set<std::string>{family_of(flake)});
    EXPECT_EQ(model.reproduced, 3);
    EXPECT_EQ(classify_sample(k_errors, failing({"as: units/unit_4.o: Input/output error"}), model),
              SampleClass::stray);
    EXPECT_NE(describe_strays(model).find(
                  "stray, GOOD fails so too: as: units/unit_2.o: Input/output error (2 of 4 "
                  "at BAD, 2 of 6 at GOOD)"),
              std::string::npos)
        << describe_strays(model);
    // A stray and the regression together: the regression shows.
    EXPECT_EQ(classify_sample(k_errors, failing({flake, regression}), model),
              SampleClass::reproduces);
    // Strays count neither way: a commit needs its clean samples all the same.
    std::vector<SampleClass> classes{SampleClass::clean, SampleClass::stray, SampleClass::clean};
    EXPECT_FALSE(decide_functional(classes, 3, 6).verdict);
}

// A family BAD shows far more often than GOOD is the regression, even though GOOD showed
// it once: rates, not presence.
TEST(ErrorModel, RatesNotPresenceDecideWhatGoodExplains) {
    const std::string eio = "units/unit_1.c:2:10: fatal error: x.h: Input/output error";
    std::vector<Sample> bad(5, failing({eio}));
    std::vector<Sample> good(9, ok());
    good.push_back(failing({"units/unit_4.c:2:10: fatal error: y.h: Input/output error"}));
    ErrorModel model = error_model(bad, good);
    ASSERT_FALSE(model.problem);
    EXPECT_EQ(model.targets, std::set<std::string>{family_of(eio)});
    EXPECT_TRUE(model.baseline.empty());
    // As often at GOOD as at BAD: nothing to bisect, and the message says so with counts.
    ErrorModel same = error_model({failing({eio}), ok(), ok()}, {failing({eio}), ok(), ok(), ok()});
    ASSERT_TRUE(same.problem);
    EXPECT_NE(same.problem->find("already bad at GOOD"), std::string::npos) << *same.problem;
    EXPECT_NE(same.problem->find("(1 of 3 at BAD, 1 of 4 at GOOD)"), std::string::npos)
        << *same.problem;
}

TEST(ErrorModel, AFailureWithNoLineRigKnowsIsUnsureNeverClean) {
    std::vector<Sample> bad(3, failing({"cat: units/unit_1.c: Bad file descriptor"}));
    ErrorModel model = error_model(bad, std::vector<Sample>(4, ok()));
    Sample silent = ok();
    silent.outcome = Outcome::workload_failed;
    EXPECT_EQ(classify_sample(k_errors, silent, model), SampleClass::unsure);
    EXPECT_EQ(classify_sample(k_errors, failing({"cc1: out of memory allocating 12 bytes: error"}),
                              model),
              SampleClass::unsure);
    // Hangs and panics stay what they were: the criterion does not ask about them.
    Sample hung = ok();
    hung.outcome = Outcome::workload_timeout;
    EXPECT_EQ(classify_sample(k_errors, hung, model), SampleClass::unusable);
    // Unsure to the budget: the commit is unsure, which git skips.
    std::vector<SampleClass> classes(8, SampleClass::unsure);
    EXPECT_EQ(decide_functional(classes, 4, 8).verdict, Verdict::unsure);
}

namespace {

using rig::test::git;

// A bisect stored as run_bisect stores one: its run, cell, endpoint and step samples.
struct StoredBisect {
    rig::test::TempDir dir;
    std::unique_ptr<rig::store::Database> db;
    Settings settings;
    std::vector<std::string> commits;
    rig::store::BisectInfo info;
    std::string cell_id;

    StoredBisect() {
        fs::path repo = dir.path() / "linux";
        fs::create_directories(repo);
        git(repo, {"init", "-q"});
        for (int i = 1; i <= 4; ++i) {
            std::ofstream(repo / "file") << i << "\n";
            git(repo, {"add", "file"});
            git(repo, {"commit", "-q", "-m", "9p: change " + std::to_string(i)});
            commits.push_back(git(repo, {"rev-parse", "HEAD"}));
        }
        std::string text = "name: unverified\nkernels:\n  - {name: linux, git: " + repo.string() +
                           ", ref: HEAD, config: [base]}\nmatrix:\n  fs: 9p\n  cache: loose\n"
                           "workload: {command: make}\n";
        fs::path file = dir.path() / "s.yaml";
        std::ofstream(file) << text;
        auto scenario = rig::spec::load_scenario(file);
        EXPECT_TRUE(scenario) << scenario.error().message;
        auto cells = rig::core::expand(*scenario);
        cell_id = cells->front().id;
        db = std::move(*rig::store::Database::open(dir.path() / "rig.db"));
        settings.results_dir = dir.path() / "results";
        rig::store::RunInfo run;
        run.scenario_name = "unverified (bisect)";
        run.scenario_file = file.string();
        run.scenario_text = text;
        info.run_id = *db->begin_run(run);
        EXPECT_TRUE(db->add_cells(info.run_id, *cells));
        info.cell_id = cell_id;
        info.good = commits[0];
        info.bad = commits[3];
        info.criterion = "errors";
        StartOptions options;
        options.scenario = file;
        info.state = encode_settings(options);
        info.id = *db->begin_bisect(info);
    }

    void step(rig::core::StepRole role, const std::string& commit, std::vector<Sample> samples,
              Verdict verdict, const std::string& evidence) {
        rig::store::BisectStep step;
        step.bisect_id = info.id;
        step.role = role;
        step.commit = commit;
        step.cell_id = cell_id;
        step.build_outcome = rig::core::BuildOutcome::ok;
        for (Sample& sample : samples) {
            sample.cell_id = cell_id;
            sample.repetition = next_repetition++;
            step.samples.push_back(*db->add_sample(info.run_id, sample));
        }
        step.verdict = verdict;
        step.evidence = evidence;
        EXPECT_TRUE(db->add_bisect_step(step));
    }
    int next_repetition = 0;
};

} // namespace

TEST(BisectReport, AnUnverifiedCulpritIsReportedAsInconclusiveNeverAsTheFirstBadCommit) {
    StoredBisect stored;
    const auto& c = stored.commits;
    const std::string line = "units/unit_1.c:2:10: fatal error: x.h: Bad file descriptor";
    using rig::core::StepRole;
    stored.step(StepRole::bad_endpoint, c[3], {failing({line}), failing({line}), failing({line})},
                Verdict::bad, "3 of 3 reproduce");
    stored.step(StepRole::good_endpoint, c[0], {ok(), ok(), ok(), ok()}, Verdict::good,
                "0 of 4 reproduce");
    stored.step(StepRole::bisect, c[1], {failing({line})}, Verdict::bad, "sample 1 reproduces");
    stored.step(StepRole::verify_parent, c[0], {ok(), failing({line})}, Verdict::bad,
                "sample 2 reproduces");
    ASSERT_TRUE(stored.db->finish_bisect(stored.info.id, rig::core::BisectStatus::unverified, c[1],
                                         "git named it but it did not verify"));
    auto report = render_report(stored.info.id, *stored.db, stored.settings);
    ASSERT_TRUE(report) << report.error().message;
    const std::string& text = *report;
    EXPECT_EQ(text.find("first bad commit:"), std::string::npos) << text;
    EXPECT_EQ(text.find("The first bad commit is"), std::string::npos) << text;
    EXPECT_EQ(text.find("[REGRESSION]"), std::string::npos) << text;
    for (const std::string& part : std::vector<std::string>{
             "Subject: [INCONCLUSIVE] rig bisect of linux",
             "and names no culprit: the bisect was inconclusive",
             "Result: git named it but it did not verify",
             "verify-parent " + c[0].substr(0, 12) +
                 " (\"9p: change 1\"): bad; sample 2 reproduces",
             std::string("bad-endpoint ") + c[3].substr(0, 12),
             std::string("Next: take more samples per commit (--samples 6 --max-samples 20), or "
                         "bisect on the regression's own message with --criterion "
                         "'signature:Bad file descriptor'"),
             // One count: the confidence line's is the endpoints'.
             std::string("reproduced in 3 of 3 samples at BAD"),
             std::string("regression: units/unit_1.c:2:10: fatal error: x.h: Bad file descriptor "
                         "(3 of 3 at BAD, 0 of 4 at GOOD)")})
        EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;

    // Verified, the same bisect names its culprit.
    ASSERT_TRUE(stored.db->finish_bisect(stored.info.id, rig::core::BisectStatus::culprit, c[1],
                                         "verified"));
    auto named = render_report(stored.info.id, *stored.db, stored.settings);
    ASSERT_TRUE(named) << named.error().message;
    EXPECT_NE(named->find("first bad commit: " + c[1]), std::string::npos) << *named;
    EXPECT_NE(named->find("Subject: [REGRESSION] 9p: change 2"), std::string::npos) << *named;
    EXPECT_EQ(named->find("INCONCLUSIVE"), std::string::npos) << *named;
}

TEST(BisectReport, SaysWhatChangedFromTheSamplesJudgedGoodToThoseJudgedBad) {
    StoredBisect stored;
    const auto& c = stored.commits;
    auto counted = [](double getattr, double seconds) {
        Sample out = ok();
        out.guest_seconds = seconds;
        out.wall_seconds = seconds + 1;
        out.metrics = {{"9p.work.getattr", getattr, "requests"}, {"9p.work.walk", 50, "requests"}};
        return out;
    };
    using rig::core::StepRole;
    stored.step(StepRole::bad_endpoint, c[3], {counted(1393, 10), counted(1393, 11)}, Verdict::bad,
                "1393 requests");
    stored.step(StepRole::good_endpoint, c[0], {counted(72, 10), counted(72, 10.5)}, Verdict::good,
                "72 requests");
    stored.step(StepRole::bisect, c[1], {counted(1393, 10.2)}, Verdict::bad, "1393 requests");
    stored.step(StepRole::verify_parent, c[0], {counted(72, 10.1)}, Verdict::good, "72 requests");
    ASSERT_TRUE(stored.db->finish_bisect(stored.info.id, rig::core::BisectStatus::culprit, c[1],
                                         "verified"));
    auto report = render_report(stored.info.id, *stored.db, stored.settings);
    ASSERT_TRUE(report) << report.error().message;
    const std::string block = "what changed from the commits judged good (3 samples) to those "
                              "judged bad (3 samples):\n";
    const std::string line = "    9p.work.getattr: 72 -> 1393 (+1834.7 %), exact, n 3/3\n";
    // In the report, and again in the mail's summary.
    auto first = report->find(block + "  ");
    ASSERT_NE(first, std::string::npos) << *report;
    EXPECT_NE(report->find(line, first), std::string::npos) << *report;
    auto mail = report->find("--- summary for a mail ---");
    ASSERT_NE(mail, std::string::npos) << *report;
    EXPECT_NE(report->find(block, mail), std::string::npos) << *report;
    EXPECT_NE(report->find(line, mail), std::string::npos) << *report;
    EXPECT_EQ(report->find("9p.work.walk"), std::string::npos) << "unchanged\n" << *report;
}

namespace {

// A history of `commits` commits after GOOD (index 0); commits from `culprit` on fail with
// the regression in each sample with probability `rate`, on a random file and line, in
// one of two messages. Every commit fails with an unrelated flake at `flake_rate`.
struct World {
    int commits = 24;
    int culprit = 1;
    double rate = 1;
    double flake_rate = 0.1;
    std::mt19937_64& rng;

    int draw(int below) { return std::uniform_int_distribution<int>(0, below - 1)(rng); }
    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

    Sample sample(int commit) {
        std::vector<std::string> lines;
        if (commit >= culprit && chance(rate)) {
            std::string unit = "units/unit_" + std::to_string(draw(40)) + ".c";
            if (chance(0.8))
                lines.push_back(unit + ":" + std::to_string(1 + draw(30)) + ":10: fatal error: " +
                                (chance(0.5) ? "include/common_" + std::to_string(draw(9)) + ".h"
                                             : "/usr/lib/gcc/x86_64-linux-gnu/12/include/"
                                               "stddef.h") +
                                ": Bad file descriptor");
            else
                lines.push_back("cc1: fatal error: " + unit + ": Bad file descriptor");
            lines.push_back("make: *** [Makefile:" + std::to_string(draw(50)) + ": " + unit +
                            "] Error 1");
        }
        if (chance(flake_rate))
            lines.push_back("as: units/unit_" + std::to_string(draw(40)) +
                            ".o: Input/output error");
        return failing(lines);
    }
};

enum class Ending { right, wrong, unverified, range, not_reproducible };

struct Simulated {
    Ending ending = Ending::not_reproducible;
    int samples = 0;
    double claimed = 0; // the confidence the report states for a good verdict
};

// One functional bisect as bisect.cpp runs it: BAD's n samples, more while no family
// stands in two; GOOD's, twice what BAD's rate asks of a good verdict; the error model; git's
// midpoints on a linear history, each commit sampled until decide_functional decides (skip and
// unsure are skipped); then the parent with the verification's count, and the culprit against the
// parent's and GOOD's samples.
Simulated simulate(World& world, int n = 3, double confidence = 0.95, int cap = 10) {
    Simulated out;
    auto take = [&](int commit) {
        ++out.samples;
        return world.sample(commit);
    };
    std::vector<Sample> bad, good;
    for (int i = 0; i < n || (bad_needs_more(bad) && i < cap); ++i)
        bad.push_back(take(world.commits));
    Reproduction seen = count_reproduction(k_errors, bad, {});
    if (seen.reproduced == 0)
        return out;
    SamplePlan first = plan_samples(seen.reproduced, seen.usable, confidence, cap);
    for (int i = 0; i < std::max(2 * first.samples, n); ++i)
        good.push_back(take(0));
    ErrorModel model = error_model(bad, good);
    if (model.problem)
        return out;
    SamplePlan plan = plan_samples(model.reproduced, model.bad_samples, confidence, cap);
    SamplePlan check = plan_verification(model.reproduced, model.bad_samples, confidence, cap);
    out.claimed = plan.confidence;
    auto judge = [&](int commit, int needed, int budget, std::vector<SampleClass>* classes) {
        for (;;) {
            classes->push_back(classify_sample(k_errors, take(commit), model));
            Decision decision = decide_functional(*classes, needed, budget);
            if (decision.verdict)
                return *decision.verdict;
        }
    };
    int good_at = 0, bad_at = world.commits;
    std::set<int> skipped;
    for (;;) {
        std::vector<int> open;
        for (int commit = good_at + 1; commit < bad_at; ++commit)
            if (!skipped.count(commit))
                open.push_back(commit);
        if (open.empty())
            break;
        int next = open[open.size() / 2];
        std::vector<SampleClass> classes;
        Verdict verdict = judge(next, plan.samples, 2 * plan.samples, &classes);
        if (verdict == Verdict::good)
            good_at = next;
        else if (verdict == Verdict::bad)
            bad_at = next;
        else
            skipped.insert(next);
    }
    for (int commit : skipped)
        if (commit > good_at && commit < bad_at) {
            out.ending = Ending::range;
            return out;
        }
    int culprit = bad_at;
    int needed = std::max(n, check.samples);
    std::vector<SampleClass> parent;
    if (judge(culprit - 1, needed, 2 * needed, &parent) != Verdict::good) {
        out.ending = Ending::unverified;
        return out;
    }
    // The commits before the culprit: its parent and GOOD.
    for (const Sample& sample : good)
        parent.push_back(classify_sample(k_errors, sample, model));
    auto count = [&](SampleClass value) {
        return static_cast<int>(std::count(parent.begin(), parent.end(), value));
    };
    int before_reproduced = count(SampleClass::reproduces);
    int before_samples = count(SampleClass::clean) + before_reproduced;
    std::vector<SampleClass> classes;
    std::optional<Verdict> verdict;
    while (!verdict) {
        classes.push_back(classify_sample(k_errors, take(culprit), model));
        verdict =
            decide_against_parent(classes, before_reproduced, before_samples, 2 * needed).verdict;
    }
    if (verdict != Verdict::bad)
        out.ending = Ending::unverified;
    else
        out.ending = culprit == world.culprit ? Ending::right : Ending::wrong;
    return out;
}

} // namespace

TEST(BisectSimulation, ThousandBisectsNameNoWrongCulpritAtHalfOrMore) {
    std::mt19937_64 rng(20261203);
    struct Tally {
        int runs = 0, samples = 0, claimed_runs = 0;
        double unclaimed = 0; // sum of 1 - claimed confidence over bisects that named one
        std::map<Ending, int> endings;
    };
    Tally high, low; // BAD's rate at 50% or more, and below
    for (int i = 0; i < 1000; ++i) {
        World world{24, 1, 0, 0, rng};
        world.culprit = 1 + world.draw(24);
        world.rate = 0.3 + 0.7 * std::uniform_real_distribution<double>(0, 1)(rng);
        world.flake_rate = 0.05 + 0.15 * std::uniform_real_distribution<double>(0, 1)(rng);
        Simulated result = simulate(world);
        Tally& tally = world.rate >= 0.5 ? high : low;
        ++tally.runs;
        tally.samples += result.samples;
        ++tally.endings[result.ending];
        if (result.ending == Ending::right || result.ending == Ending::wrong) {
            ++tally.claimed_runs;
            tally.unclaimed += 1 - result.claimed;
        }
    }
    auto print = [](const char* what, const Tally& tally) {
        std::cout << "[ simulated ] " << what << ": " << tally.runs << " bisects, "
                  << tally.endings.at(Ending::right) << " right culprits, "
                  << (tally.endings.count(Ending::wrong) ? tally.endings.at(Ending::wrong) : 0)
                  << " wrong, "
                  << (tally.endings.count(Ending::unverified) ? tally.endings.at(Ending::unverified)
                                                              : 0)
                  << " unverified, "
                  << (tally.endings.count(Ending::range) ? tally.endings.at(Ending::range) : 0)
                  << " ranges, "
                  << (tally.endings.count(Ending::not_reproducible)
                          ? tally.endings.at(Ending::not_reproducible)
                          : 0)
                  << " not reproducible; " << tally.samples / tally.runs
                  << " samples a bisect on average\n";
    };
    print("BAD reproduces at 50-100%", high);
    print("BAD reproduces at 30-50%", low);
    EXPECT_EQ(high.endings[Ending::wrong], 0);
    // Below half: no more wrong culprits than the confidence the reports claim allows.
    ASSERT_GT(low.claimed_runs, 0);
    EXPECT_LE(low.endings[Ending::wrong], low.unclaimed);
    // Most bisects end with the right culprit where the bug shows at least half the time.
    EXPECT_GT(high.endings[Ending::right], high.runs * 3 / 4);
}
