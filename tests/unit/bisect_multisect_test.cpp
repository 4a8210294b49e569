// SPDX-License-Identifier: MIT
// Multisection: the commits a round chooses, on a line and across merges; the rounds, told
// to the fake history and to git's own bisect over a history with merges, name the same
// culprit (or the same range of skipped commits) as one commit at a time for every place
// of the culprit in ranges of 1 to 64 commits; and the driver with --jobs 3 --multisection.
#include "bisect/git.hpp"
#include "bisect/multisect.hpp"
#include "fake_git_history.hpp"
#include "git_run.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>

using namespace rig;

namespace {

namespace fs = std::filesystem;

// A line of `n` commits "c1".."cn", newest (the known bad one) first.
bisect::Remaining line(size_t n) {
    bisect::Remaining out;
    for (size_t at = n; at >= 1; --at) {
        bisect::Remaining::Commit commit{"c" + std::to_string(at), {}};
        if (at > 1)
            commit.parents.push_back(out.commits.size() + 1);
        out.commits.push_back(commit);
    }
    out.bad = "c" + std::to_string(n);
    return out;
}

// What a bisect ended with: the culprit, or the range git could not split.
struct Answer {
    std::string culprit;
    std::vector<std::string> candidates;
    bool operator==(const Answer&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Answer& answer) {
    out << (answer.culprit.empty() ? "range" : "culprit " + answer.culprit);
    for (const auto& candidate : answer.candidates)
        out << " " << candidate;
    return out;
}

// The driver's loop without builds or guests: rounds of `slots` commits chosen and told in
// order while still open (as bisect/bisect.cpp does), each commit's verdict from `verdict`.
// Returns the answer and counts the rounds.
Answer hunt(bisect::History& history, const std::string& good, const std::string& bad, size_t slots,
            const std::function<core::Verdict(const std::string&)>& verdict,
            int* rounds = nullptr) {
    bisect::GitState state = history.start(bad, good).value();
    int count = 0;
    while (!state.done) {
        ++count;
        std::vector<std::string> round{state.next};
        if (slots > 1 && state.output.find("merge base must be tested") == std::string::npos) {
            auto chosen = bisect::split_points(history.remaining().value(), slots);
            if (chosen.size() > 1)
                round = chosen;
        }
        for (const std::string& sha : round) {
            if (slots > 1 && sha != state.next &&
                !bisect::still_open(history.remaining().value(), sha))
                continue;
            state = history.mark(verdict(sha), sha).value();
        }
        if (count > 200) {
            ADD_FAILURE() << "no end after 200 rounds";
            break;
        }
    }
    if (rounds)
        *rounds = count;
    return {state.culprit, state.candidates};
}

} // namespace

TEST(Multisection, OnALineTheRoundSplitsWhatIsLeftEvenly) {
    // Ten commits left: git's midpoint is the fifth; three slots take the quarters.
    EXPECT_EQ(bisect::split_points(line(10), 1), (std::vector<std::string>{"c5"}));
    EXPECT_EQ(bisect::split_points(line(10), 3), (std::vector<std::string>{"c3", "c5", "c8"}));
    EXPECT_EQ(bisect::split_points(line(12), 2), (std::vector<std::string>{"c4", "c8"}));
    // Never the known bad commit, never a skipped one, fewer when fewer are left.
    EXPECT_EQ(bisect::split_points(line(3), 4), (std::vector<std::string>{"c1", "c2"}));
    EXPECT_TRUE(bisect::split_points(line(1), 2).empty());
    bisect::Remaining skipped = line(10);
    skipped.skipped = {"c5"};
    auto round = bisect::split_points(skipped, 1);
    ASSERT_EQ(round.size(), 1u);
    EXPECT_TRUE(round[0] == "c4" || round[0] == "c6") << round[0];
}

TEST(Multisection, AcrossAMergeTheRoundCountsTheCommitsEachOneReaches) {
    // bad = m, a merge of two branches of four commits each on the last good commit:
    //   a1 - a2 - a3 - a4 \
    //   b1 - b2 - b3 - b4 - m
    // Each branch reaches only itself: a4 and b4 reach 4 of the 9, m all 9. Two slots
    // split at 3 and 6: b3 (3) and a4 or b4 (4) are the nearest.
    bisect::Remaining merge;
    merge.bad = "m";
    merge.commits.push_back({"m", {1, 5}});
    for (const char* branch : {"a", "b"}) {
        size_t first = merge.commits.size();
        for (int at = 4; at >= 1; --at) {
            bisect::Remaining::Commit commit{branch + std::to_string(at), {}};
            if (at > 1)
                commit.parents.push_back(first + static_cast<size_t>(4 - at) + 1);
            merge.commits.push_back(commit);
        }
    }
    auto round = bisect::split_points(merge, 2);
    ASSERT_EQ(round.size(), 2u);
    EXPECT_TRUE(round[0] == "a3" || round[0] == "b3") << round[0];
    EXPECT_TRUE(round[1] == "a4" || round[1] == "b4") << round[1];
    EXPECT_TRUE(bisect::still_open(merge, "a1"));
    EXPECT_FALSE(bisect::still_open(merge, "m"));
    EXPECT_FALSE(bisect::still_open(merge, "z"));
}

// Every place of the culprit in ranges of 1 to 64 commits, and of 1 to 32 with commits
// that do not build (skipped) and commits whose samples are too flaky to decide (unsure,
// told as skip): rounds of 2 and 5 commits end where one commit at a time does, in no
// more rounds.
TEST(Multisection, NamesWhatBinaryBisectNamesForEveryCulpritInRangesUpTo64) {
    for (bool skips : {false, true}) {
        for (int n = 1; n <= (skips ? 32 : 64); ++n) {
            test::FakeGitHistory history(n + 1);
            const auto& commits = history.commits();
            std::map<std::string, int> index;
            for (int i = 0; i <= n; ++i)
                index[commits[i]] = i;
            for (int culprit = 1; culprit <= n; ++culprit) {
                auto verdict = [&](const std::string& sha) {
                    int at = index.at(sha);
                    if (skips && at != n && at % 7 == 3)
                        return core::Verdict::skip; // does not build
                    if (skips && at != n && at % 11 == 5)
                        return core::Verdict::unsure; // flaky samples
                    return at >= culprit ? core::Verdict::bad : core::Verdict::good;
                };
                auto binary_history = history.open();
                int binary_rounds = 0;
                Answer binary =
                    hunt(*binary_history, commits[0], commits[n], 1, verdict, &binary_rounds);
                if (!skips)
                    ASSERT_EQ(binary.culprit, commits[culprit]) << n << " " << culprit;
                for (size_t slots : {2u, 5u}) {
                    auto multi_history = history.open();
                    int rounds = 0;
                    Answer multi =
                        hunt(*multi_history, commits[0], commits[n], slots, verdict, &rounds);
                    ASSERT_EQ(multi, binary) << "range of " << n << ", culprit " << culprit << ", "
                                             << slots << " slots, skips " << skips;
                    EXPECT_LE(rounds, binary_rounds) << n << " " << culprit << " " << slots;
                }
            }
        }
    }
}

// git's own bisect over a history with merges: for each commit as the culprit (a commit is
// bad when the culprit is among its ancestors), rounds of 3 name it, in fewer rounds than
// git's steps one at a time.
TEST(Multisection, NamesTheCulpritAcrossMergesWithGitsOwnBisect) {
    test::TempDir dir;
    fs::path repo = dir.path() / "linux";
    fs::create_directories(repo);
    test::git(repo, {"init", "-q", "-b", "master"});
    int counter = 0;
    auto commit = [&] {
        std::ofstream(repo / ("f" + std::to_string(counter))) << counter;
        test::git(repo, {"add", "."});
        test::git(repo, {"commit", "-q", "-m", "commit " + std::to_string(counter++)});
        return test::git(repo, {"rev-parse", "HEAD"});
    };
    const std::string good = commit();
    // Two topic branches of three commits off the good commit, merged one after the other
    // into a mainline that also moves on: 11 commits in good..bad.
    test::git(repo, {"checkout", "-q", "-b", "topic-a"});
    for (int i = 0; i < 3; ++i)
        commit();
    test::git(repo, {"checkout", "-q", "master"});
    commit();
    test::git(repo, {"checkout", "-q", "-b", "topic-b"});
    for (int i = 0; i < 3; ++i)
        commit();
    test::git(repo, {"checkout", "-q", "master"});
    test::git(repo, {"merge", "-q", "--no-ff", "-m", "merge a", "topic-a"});
    commit();
    test::git(repo, {"merge", "-q", "--no-ff", "-m", "merge b", "topic-b"});
    const std::string bad = commit();
    std::vector<std::string> range;
    std::istringstream listed(test::git(repo, {"rev-list", good + ".." + bad}));
    std::map<std::string, std::set<std::string>> ancestors;
    for (std::string sha; std::getline(listed, sha);) {
        range.push_back(sha);
        std::istringstream reached(test::git(repo, {"rev-list", sha}));
        for (std::string ancestor; std::getline(reached, ancestor);)
            ancestors[sha].insert(ancestor);
    }
    ASSERT_EQ(range.size(), 11u);
    // One repository of rig's for every hunt: start() forgets the one before.
    auto history = bisect::GitBisect::open_history(dir.path() / "bisect", repo).value();
    int rounds = 0, steps = 0;
    for (const std::string& culprit : range) {
        auto verdict = [&](const std::string& sha) {
            return ancestors.at(sha).count(culprit) ? core::Verdict::bad : core::Verdict::good;
        };
        int hunt_rounds = 0, hunt_steps = 0;
        EXPECT_EQ(hunt(*history, good, bad, 3, verdict, &hunt_rounds), (Answer{culprit, {}}));
        EXPECT_EQ(hunt(*history, good, bad, 1, verdict, &hunt_steps), (Answer{culprit, {}}));
        rounds += hunt_rounds;
        steps += hunt_steps;
    }
    EXPECT_LT(rounds, steps);
}

// What a bisect builds while a commit's guests run: the commits it may test next on either
// verdict. Over the fake history's choices for every culprit in ranges of 2 to 40 commits,
// and git's own on a line of 20, the next commit tested is always one of them.
TEST(Multisection, TheCommitsBuiltAheadAreTheOnesTestedNext) {
    EXPECT_EQ(bisect::next_after(line(10), "c5"),
              (std::vector<std::string>{"c3", "c8", "c2", "c7"}))
        << "bad: the halfway commits of c1..c5; good: of c6..c10; each side's in turn";
    EXPECT_EQ(bisect::next_after(line(2), "c1"), std::vector<std::string>{})
        << "either verdict ends the bisect";
    EXPECT_TRUE(bisect::next_after(line(10), "z").empty());
    int steps = 0, hits = 0;
    size_t built = 0;
    // Steps a bisect of `culprit` takes from `history`'s start, counting how often the next
    // commit was built ahead.
    auto hunt_ahead = [&](bisect::History& history, const std::string& good, const std::string& bad,
                          const std::function<bool(const std::string&)>& is_bad) {
        bisect::GitState state = history.start(bad, good).value();
        while (!state.done) {
            const auto ahead = bisect::next_after(history.remaining().value(), state.next);
            state =
                history
                    .mark(is_bad(state.next) ? core::Verdict::bad : core::Verdict::good, state.next)
                    .value();
            if (state.done)
                break;
            ++steps;
            built += ahead.size();
            hits += std::find(ahead.begin(), ahead.end(), state.next) != ahead.end();
        }
    };
    for (int n = 2; n <= 40; ++n)
        for (int culprit = 1; culprit <= n; ++culprit) {
            test::FakeGitHistory fake(n + 1);
            const auto commits = fake.commits();
            auto history = fake.open();
            hunt_ahead(*history, commits.front(), commits.back(), [&](const std::string& sha) {
                return std::find(commits.begin(), commits.end(), sha) - commits.begin() >= culprit;
            });
        }
    EXPECT_GT(steps, 1000);
    EXPECT_EQ(hits, steps) << "a next commit of the fake history's that was not built ahead";
    // git's own bisect, on a line of 20 commits and every culprit.
    test::TempDir dir;
    const fs::path repo = dir.path() / "linux";
    fs::create_directories(repo);
    test::git(repo, {"init", "-q", "-b", "master"});
    std::vector<std::string> commits;
    for (int i = 0; i <= 20; ++i) {
        std::ofstream(repo / "f") << i;
        test::git(repo, {"add", "."});
        test::git(repo, {"commit", "-q", "-m", "commit " + std::to_string(i)});
        commits.push_back(test::git(repo, {"rev-parse", "HEAD"}));
    }
    auto history = bisect::GitBisect::open_history(dir.path() / "bisect", repo).value();
    steps = hits = 0;
    built = 0;
    for (int culprit = 1; culprit <= 20; ++culprit)
        hunt_ahead(*history, commits.front(), commits.back(), [&](const std::string& sha) {
            return std::find(commits.begin(), commits.end(), sha) - commits.begin() >= culprit;
        });
    EXPECT_GT(steps, 40);
    EXPECT_EQ(hits, steps) << "a next commit of git's that was not built ahead";
    EXPECT_LE(built, 4u * static_cast<size_t>(steps)) << "two a verdict at most";
}
