// SPDX-License-Identifier: MIT
// Tests of util/: units, strings, hashing, file locks, lock holders, free space, mail.
#include "temp_dir.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/lock.hpp"
#include "util/mail.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace rig::util;
using std::chrono::milliseconds;

TEST(Units, DurationForms) {
    EXPECT_EQ(parse_duration("90"), milliseconds(90'000));
    EXPECT_EQ(parse_duration("90s"), milliseconds(90'000));
    EXPECT_EQ(parse_duration("2m"), milliseconds(120'000));
    EXPECT_EQ(parse_duration("1h30m"), milliseconds(5'400'000));
    EXPECT_EQ(parse_duration("250ms"), milliseconds(250));
    EXPECT_EQ(parse_duration("1m30s500ms"), milliseconds(90'500));
}

TEST(Units, DurationRejects) {
    for (const char* bad : {"", "m", "1x", "-1s", "1.5s", "10 s", "99999999999999999999s", "1s2"})
        EXPECT_FALSE(parse_duration(bad)) << bad;
}

TEST(Units, DurationFormat) {
    EXPECT_EQ(format_duration(milliseconds(500)), "500ms");
    EXPECT_EQ(format_duration(milliseconds(12'340)), "12.3s");
    EXPECT_EQ(format_duration(milliseconds(20 * 60'000 + 40'000)), "20m 40s");
    EXPECT_EQ(format_duration(milliseconds(2 * 3'600'000 + 60'000)), "2h 1m");
}

TEST(Units, DurationStylesKeepEachPlacesText) {
    EXPECT_EQ(format_duration(0.3456, DurationStyle::progress), "345ms");
    EXPECT_EQ(format_duration(0.3456, DurationStyle::report), "0.3s");
    EXPECT_EQ(format_duration(59.94, DurationStyle::progress), "59.9s");
    EXPECT_EQ(format_duration(59.96, DurationStyle::report), "1m 0s");
    EXPECT_EQ(format_duration(119.7, DurationStyle::progress), "1m 59s");
    EXPECT_EQ(format_duration(119.7, DurationStyle::report), "2m 0s");
    EXPECT_EQ(format_duration(5.9, DurationStyle::minutes_colon), "0m05s");
    EXPECT_EQ(format_duration(750, DurationStyle::minutes_colon), "12m30s");
}

TEST(Strings, FixedAndPValues) {
    EXPECT_EQ(fixed(2.345, 1), "2.3");
    EXPECT_EQ(fixed(52.6, 0), "53");
    EXPECT_EQ(format_p(0.04213, PStyle::three_decimals), "0.042");
    EXPECT_EQ(format_p(0.0004, PStyle::three_decimals), "<0.001");
    EXPECT_EQ(format_p(0.04213, PStyle::three_significant), "0.0421");
    EXPECT_EQ(format_p(0.0000123, PStyle::three_significant), "1.23e-05");
}

TEST(Strings, EscapeUsesTheGivenEntities) {
    EXPECT_EQ(escape("a<b & 'c'", {{'&', "&amp;"}, {'<', "&lt;"}, {'\'', "&apos;"}}),
              "a&lt;b &amp; &apos;c&apos;");
    EXPECT_EQ(escape("'", {{'\'', "&#39;"}}), "&#39;");
    EXPECT_EQ(escape("plain", {}), "plain");
}

TEST(Strings, ShellWordQuotesOnlyWhatAShellWouldRead) {
    EXPECT_EQ(shell_word("-device"), "-device");
    EXPECT_EQ(shell_word("local,id=fs0,path=/usr"), "local,id=fs0,path=/usr");
    EXPECT_EQ(shell_word("console=ttyS0 panic=-1"), "'console=ttyS0 panic=-1'");
    EXPECT_EQ(shell_word("it's $HOME"), "'it'\\''s $HOME'");
    EXPECT_EQ(shell_word(""), "''");
    EXPECT_EQ(shell_word("a;b"), "'a;b'");
}

TEST(Units, Sizes) {
    EXPECT_EQ(parse_size("8192"), 8192u);
    EXPECT_EQ(parse_size("512K"), 524288u);
    EXPECT_EQ(parse_size("1G"), 1ull << 30);
    EXPECT_EQ(parse_size("1GiB"), 1ull << 30);
    EXPECT_EQ(parse_size("2MB"), 2ull << 20);
    EXPECT_FALSE(parse_size("1Q"));
    EXPECT_FALSE(parse_size("K"));
    EXPECT_FALSE(parse_size("99999999999999999999"));
    EXPECT_FALSE(parse_size("99999999999T"));
}

TEST(Strings, SplitJoinTrim) {
    EXPECT_EQ(split("a,b,,c", ','), (std::vector<std::string>{"a", "b", "", "c"}));
    EXPECT_EQ(join({"a", "b"}, ", "), "a, b");
    EXPECT_EQ(trim("  x y \n"), "x y");
    EXPECT_EQ(trim("   "), "");
}

TEST(Strings, ReplaceAll) {
    EXPECT_EQ(replace_all("/a/build-1/x /a/build-1/y", "/a/build-1", "/a/build-22"),
              "/a/build-22/x /a/build-22/y");
    EXPECT_EQ(replace_all("aaa", "a", "aa"), "aaaaaa");
    EXPECT_EQ(replace_all("none here", "xyz", "q"), "none here");
}

TEST(Strings, Suggestions) {
    std::vector<std::string> keys{"fs", "msize", "cache", "config"};
    EXPECT_EQ(closest_match("chache", keys), "cache");
    EXPECT_EQ(closest_match("msiz", keys), "msize");
    EXPECT_EQ(closest_match("workload", keys), "");
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(edit_distance("kmv", "kvm"), 1u);
    EXPECT_EQ(closest_match("kmv", {"kvm", "tcg", "auto"}), "kvm");
}

TEST(Hash, KnownVectors) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

#include "util/base64.hpp"

TEST(Base64, DecodesAndRejects) {
    EXPECT_EQ(base64_decode(""), "");
    EXPECT_EQ(base64_decode("Zg=="), "f");
    EXPECT_EQ(base64_decode("Zm8="), "fo");
    EXPECT_EQ(base64_decode("Zm9v"), "foo");
    EXPECT_EQ(base64_decode("AAEC"), std::string("\0\1\2", 3));
    EXPECT_FALSE(base64_decode("Zm9"));
    EXPECT_FALSE(base64_decode("Zm9v!!!!"));
}

TEST(FileLock, ASecondHolderWaitsOrIsRefusedUntilTheFirstLetsGo) {
    rig::test::TempDir dir;
    const auto path = dir.path() / "lock";
    auto first = FileLock::try_acquire(path);
    ASSERT_TRUE(first.has_value()) << first.error().message;
    ASSERT_TRUE(first->has_value());
    // flock belongs to the open file: a second open in this process conflicts too.
    auto refused = FileLock::try_acquire(path);
    ASSERT_TRUE(refused.has_value());
    EXPECT_FALSE(refused->has_value());
    first->reset();
    bool waited = false;
    auto second = FileLock::acquire(path, [&] { waited = true; });
    ASSERT_TRUE(second.has_value());
    EXPECT_FALSE(waited);
    auto missing = FileLock::try_acquire(dir.path() / "no" / "such" / "lock");
    ASSERT_FALSE(missing.has_value());
    EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos);
}

TEST(LockHolder, ProcLocksLinesAreMatchedByFileByteAndHolder) {
    const std::string locks = "1: POSIX  ADVISORY  WRITE 300 fe:00:77 120 120\n"
                              "1: -> POSIX  ADVISORY  WRITE 400 fe:00:77 120 120\n"
                              "2: POSIX  ADVISORY  READ 301 fe:00:77 128 128\n"
                              "3: FLOCK  ADVISORY  WRITE 302 fe:00:77 0 EOF\n"
                              "4: POSIX  ADVISORY  WRITE 303 00:2d:77 0 EOF\n"
                              "5: POSIX  ADVISORY  WRITE 304 fe:00:78 100 EOF\n";
    EXPECT_EQ(find_write_lock(locks, 0xfe, 0, 77, 120, 1), 300);
    // The waiter (->) holds nothing; this process's own locks are not another's.
    EXPECT_EQ(find_write_lock(locks, 0xfe, 0, 77, 120, 300), std::nullopt);
    // A read lock, a byte outside the range, another device: no holder.
    EXPECT_EQ(find_write_lock(locks, 0xfe, 0, 77, 128, 1), std::nullopt);
    EXPECT_EQ(find_write_lock(locks, 0xfe, 0, 77, 121, 1), std::nullopt);
    EXPECT_EQ(find_write_lock(locks, 0, 0x2d, 77, 5, 1), 303);
    EXPECT_EQ(find_write_lock(locks, 0xfe, 0, 78, 1u << 30, 1), 304);
    EXPECT_EQ(find_write_lock("garbage\n\n", 0xfe, 0, 77, 120, 1), std::nullopt);
}

TEST(LockHolder, AnotherProcessHoldingAByteIsNamed) {
    rig::test::TempDir dir;
    const auto path = dir.path() / "file";
    std::ofstream(path) << "x";
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t holder = ::fork();
    ASSERT_GE(holder, 0);
    if (holder == 0) {
        int fd = ::open(path.c_str(), O_RDWR);
        struct flock lock {};
        lock.l_type = F_WRLCK;
        lock.l_whence = SEEK_SET;
        lock.l_start = 120;
        lock.l_len = 1;
        char done = ::fcntl(fd, F_SETLK, &lock) == 0 ? 'y' : 'n';
        if (::write(ready[1], &done, 1) != 1)
            ::_exit(1);
        for (;;)
            ::pause();
    }
    char done = 0;
    ASSERT_EQ(::read(ready[0], &done, 1), 1);
    auto found = write_lock_holder(path, 120);
    auto elsewhere = write_lock_holder(path, 121);
    ::kill(holder, SIGKILL);
    ::waitpid(holder, nullptr, 0);
    ASSERT_EQ(done, 'y');
    ASSERT_TRUE(found);
    EXPECT_EQ(found->pid, holder);
    EXPECT_FALSE(found->name.empty());
    EXPECT_FALSE(elsewhere);
    EXPECT_FALSE(write_lock_holder(dir.path() / "missing", 120));
}

TEST(File, AvailableBytes) {
    rig::test::TempDir dir;
    auto free = available_bytes(dir.path());
    ASSERT_TRUE(free);
    EXPECT_GT(*free, 0u);
    EXPECT_FALSE(available_bytes(dir.path() / "missing"));
}

TEST(File, FileWithExtensionFindsTheOneFileOrNothing) {
    rig::test::TempDir dir;
    EXPECT_TRUE(file_with_extension(dir.path(), ".ko").empty());
    std::ofstream(dir.path() / "build.log") << "x";
    std::ofstream(dir.path() / "a.ko.cmd") << "x";
    EXPECT_TRUE(file_with_extension(dir.path(), ".ko").empty());
    std::ofstream(dir.path() / "bh_lookup.ko") << "x";
    EXPECT_EQ(file_with_extension(dir.path(), ".ko"), dir.path() / "bh_lookup.ko");
    EXPECT_TRUE(file_with_extension(dir.path() / "missing", ".ko").empty());
}

// A cover letter's To and Cc lists: commas inside a quoted name or an address do not split.
TEST(Mail, AddressListsSplitOutsideQuotesAndAngleBrackets) {
    EXPECT_EQ(
        rig::util::split_addresses("\"Thor, A. U.\" <author@example.org>, v9fs@lists.linux.dev,\n\t"
                                   "<odd,one@example.org>, , \"Q \\\"x, y\\\"\" <q@example.org>"),
        (std::vector<std::string>{"\"Thor, A. U.\" <author@example.org>", "v9fs@lists.linux.dev",
                                  "<odd,one@example.org>", "\"Q \\\"x, y\\\"\" <q@example.org>"}));
    EXPECT_TRUE(rig::util::split_addresses("  ").empty());
    auto thor = rig::util::parse_mailbox(" \"Thor, A. U.\" <author@example.org> ");
    EXPECT_EQ(thor.name, "Thor, A. U.");
    EXPECT_EQ(thor.address, "author@example.org");
    auto bare = rig::util::parse_mailbox("v9fs@lists.linux.dev");
    EXPECT_EQ(bare.name, "v9fs@lists.linux.dev");
    EXPECT_EQ(bare.address, "v9fs@lists.linux.dev");
    EXPECT_EQ(rig::util::domain_of("Kernel Robot <robot@example.org>"), "example.org");
    EXPECT_EQ(rig::util::domain_of("robot@example.org"), "example.org");
    EXPECT_EQ(rig::util::domain_of("robot"), "localhost");
    EXPECT_EQ(rig::util::domain_of("Robot <robot@>"), "localhost");
}

// One writer of rig's messages: the reply headers only when set, a name with specials
// quoted, a subject outside ASCII encoded, and the body's "From " lines quoted.
TEST(Mail, AMessageIsWrittenAsAnMboxEntry) {
    rig::util::MessageHeaders headers;
    headers.envelope = "abc123";
    headers.from = "Kernel Robot <robot@example.org>";
    headers.to = "A. U. Thor <author@example.org>";
    headers.cc = {"v9fs@lists.linux.dev"};
    headers.subject = "Re: [PATCH 0/3] 9p: fewer round trips";
    headers.date = std::chrono::system_clock::from_time_t(0);
    headers.message_id = "x@example.org";
    headers.in_reply_to = "cover@example.org";
    headers.references = "<cover@example.org>";
    std::string text = rig::util::mbox_message(headers, "From here on\nbody\n\n\n");
    EXPECT_EQ(text, "From abc123 Mon Sep 17 00:00:00 2001\n"
                    "From: Kernel Robot <robot@example.org>\n"
                    "To: \"A. U. Thor\" <author@example.org>\n"
                    "Cc: v9fs@lists.linux.dev\n"
                    "Subject: Re: [PATCH 0/3] 9p: fewer round trips\n"
                    "Date: Thu, 01 Jan 1970 00:00:00 +0000\n"
                    "Message-ID: <x@example.org>\n"
                    "In-Reply-To: <cover@example.org>\n"
                    "References: <cover@example.org>\n"
                    "MIME-Version: 1.0\n"
                    "Content-Type: text/plain; charset=UTF-8\n"
                    "Content-Transfer-Encoding: 8bit\n"
                    "\n"
                    ">From here on\nbody\n");
    headers.in_reply_to.clear();
    headers.references.clear();
    headers.subject = "caf\xc3\xa9";
    text = rig::util::mbox_message(headers, "x");
    EXPECT_EQ(text.find("In-Reply-To"), std::string::npos);
    EXPECT_NE(text.find("Subject: =?UTF-8?B?Y2Fmw6k=?=\n"), std::string::npos) << text;
}
