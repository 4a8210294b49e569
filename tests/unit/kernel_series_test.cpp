// SPDX-License-Identifier: MIT
// A posted series split into its cover letter and patches, and checked against a real
// git repository before anything is built.
#include "kernel/series.hpp"
#include "proc/process.hpp"
#include "util/file.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace fs = std::filesystem;
using rig::kernel::parse_series;
using rig::kernel::split_mbox;

namespace {

std::string mail(const std::string& subject, const std::string& body,
                 const std::string& extra_headers = "") {
    return "From 0123456789abcdef Mon Sep 17 00:00:00 2001\nFrom: A U Thor <author@example.org>\n"
           "Date: Wed, 1 Mar 2023 00:02:00 +0000\nSubject: " +
           subject + "\n" + extra_headers + "\n" + body + "\n";
}

std::string patch_body(const std::string& message) {
    return message + "\n---\n a.c | 1 +\n\ndiff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n"
                     "@@ -1 +1,2 @@\n one\n+two\n-- \n2.39.5\n";
}

std::vector<std::string> three_and_cover() {
    return {mail("[PATCH v2 0/3] 9p: fewer round trips", "Why.\n\nbase-commit: abc123\n",
                 "Message-Id: <cover.1.git.author@example.org>\nTo: list@example.org\n"
                 "Cc: maintainer@example.org\nReferences: <v1@example.org>\n"),
            mail("[PATCH v2 2/3] 9p: second", patch_body("Second.")),
            mail("[PATCH v2 1/3] 9p: first", patch_body("First.")),
            mail("[PATCH v2 3/3] 9p: third\n  folded", patch_body("Third."))};
}

} // namespace

TEST(Series, AnMboxSplitsAtFromLinesThatStartAMessage) {
    std::string text = mail("[PATCH 1/2] a", "body\nFrom the start, a line of the body\n") +
                       mail("[PATCH 2/2] b", ">From quoted\n");
    std::vector<std::string> messages = split_mbox(text);
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_NE(messages[0].find("From the start, a line of the body"), std::string::npos);
    EXPECT_EQ(messages[1].rfind("From 0123456789abcdef", 0), 0u);
}

TEST(Series, PatchesComeInTheirNumberedOrderAndTheCoverLetterApart) {
    auto series = parse_series(three_and_cover(), "series s.mbox");
    ASSERT_TRUE(series) << series.error().message;
    ASSERT_TRUE(series->cover);
    EXPECT_EQ(series->cover->message_id, "cover.1.git.author@example.org");
    EXPECT_EQ(series->cover->references, "<v1@example.org>");
    EXPECT_EQ(series->cover->to, "list@example.org");
    EXPECT_EQ(series->cover->cc, "maintainer@example.org");
    EXPECT_EQ(series->base_commit, "abc123");
    ASSERT_EQ(series->patches.size(), 3u);
    EXPECT_EQ(series->patches[0].title(), "9p: first");
    EXPECT_EQ(series->patches[1].title(), "9p: second");
    // A folded subject is unfolded.
    EXPECT_EQ(series->patches[2].title(), "9p: third folded");
    EXPECT_EQ(series->patches[2].file_name(), "0003-9p-third-folded.patch");
    EXPECT_EQ(series->patches[0].body, "First.");
    EXPECT_EQ(series->patches[0].date, "Wed, 1 Mar 2023 00:02:00 +0000");
    EXPECT_EQ(series->patches[0].from, "A U Thor <author@example.org>");
}

TEST(Series, LonePatchesWithoutNumbersKeepTheirFileOrder) {
    auto series = parse_series(
        {mail("[PATCH] b first", patch_body("B.")), mail("[RFC PATCH] a second", patch_body("A."))},
        "series d");
    ASSERT_TRUE(series) << series.error().message;
    EXPECT_FALSE(series->cover);
    ASSERT_EQ(series->patches.size(), 2u);
    EXPECT_EQ(series->patches[0].title(), "b first");
    EXPECT_EQ(series->patches[1].number, 2);
}

TEST(Series, AGapATwinOrAMixOfSeriesIsAnErrorNamingIt) {
    auto missing = parse_series({mail("[PATCH 1/3] a", ""), mail("[PATCH 3/3] c", "")}, "series s");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message, "series s: patch 2/3 is missing");
    auto twice = parse_series({mail("[PATCH 1/2] a", ""), mail("[PATCH 1/2] b", "")}, "series s");
    ASSERT_FALSE(twice);
    EXPECT_NE(twice.error().message.find("two messages are numbered 1/2"), std::string::npos);
    auto mixed = parse_series({mail("[PATCH 1/2] a", ""), mail("[PATCH 2/3] b", "")}, "series s");
    ASSERT_FALSE(mixed);
    EXPECT_NE(mixed.error().message.find("two series in one file"), std::string::npos);
    auto cover_only = parse_series({mail("[PATCH 0/2] cover", "")}, "series s");
    ASSERT_FALSE(cover_only);
    auto unnumbered = parse_series(
        {mail("[PATCH 1/2] a", ""), mail("Re: a", ""), mail("[PATCH 2/2] b", "")}, "series s");
    ASSERT_FALSE(unnumbered);
    EXPECT_NE(unnumbered.error().message.find("'Re: a' has no [PATCH n/N] number"),
              std::string::npos);
}

// A real repository: the series is checked against the commit with a private index and
// object folder, so that the repository gains nothing, and a patch that does not apply is
// named with the hunk that failed.
TEST(Series, TheCheckNamesThePatchAndHunkThatDoNotApplyAndWritesNothing) {
    fs::path repo = fs::temp_directory_path() / ("rig-series-test-" + std::to_string(::getpid()));
    fs::remove_all(repo);
    fs::create_directories(repo);
    auto git = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {"git", "-C", repo.string()});
        rig::proc::RunOptions options;
        options.env = {{"GIT_AUTHOR_NAME", "t"},
                       {"GIT_AUTHOR_EMAIL", "t@e"},
                       {"GIT_COMMITTER_NAME", "t"},
                       {"GIT_COMMITTER_EMAIL", "t@e"}};
        auto result = rig::proc::run(args, options);
        EXPECT_TRUE(result && result->exit_code == 0) << args[3];
        return result ? result->out : std::string();
    };
    git({"init", "-q"});
    ASSERT_TRUE(rig::util::write_file_atomically(repo / "a.c", "one\n"));
    git({"add", "a.c"});
    git({"commit", "-q", "-m", "base"});
    std::string commit = git({"rev-parse", "HEAD"});
    commit.pop_back();
    std::string objects_before = git({"count-objects"});

    std::vector<std::string> good = {mail("[PATCH 1/2] two", patch_body("Two.")),
                                     mail("[PATCH 2/2] three",
                                          "Three.\n---\ndiff --git a/a.c b/a.c\n--- a/a.c\n+++ "
                                          "b/a.c\n@@ -1,2 +1,3 @@\n one\n two\n+three\n")};
    auto applies = rig::kernel::check_series_applies(repo, commit, {},
                                                     *parse_series(good, "series s"), "series s");
    EXPECT_TRUE(applies) << applies.error().message;

    std::vector<std::string> bad = good;
    bad[1] = mail("[PATCH 2/2] three", "Three.\n---\ndiff --git a/a.c b/a.c\n--- a/a.c\n+++ "
                                       "b/a.c\n@@ -1,2 +1,3 @@\n one\n deux\n+three\n");
    auto refused = rig::kernel::check_series_applies(repo, commit, {},
                                                     *parse_series(bad, "series s"), "series s");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, rig::ErrorKind::config);
    for (const std::string& part :
         {std::string("series s: patch 2/2 'three' (0002-three.patch) does not apply to ") +
              commit.substr(0, 12) + " with the patches before it",
          std::string("patch failed: a.c:1"), std::string("the hunk that failed:\n    @@ -1,2 "),
          std::string("     deux")})
        EXPECT_NE(refused.error().message.find(part), std::string::npos) << part << "\n"
                                                                         << refused.error().message;
    EXPECT_EQ(git({"count-objects"}), objects_before);
    EXPECT_EQ(git({"status", "--porcelain"}), "");
    fs::remove_all(repo);
}
