// SPDX-License-Identifier: MIT
// Tests of util/follow: following a log that appears late and grows, tails, line splitting.
#include "temp_dir.hpp"
#include "util/follow.hpp"
#include "util/tail.hpp"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <vector>

using namespace rig::util;
namespace fs = std::filesystem;

namespace {

using rig::test::TempDir;

// Appends as QEMU's -serial file: backend does, with the follower's descriptor still open.
void append(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << bytes;
}

std::vector<std::string> split_all(LineSplitter& splitter, std::string_view bytes) {
    std::vector<std::string> lines;
    splitter.feed(bytes, [&](std::string_view line) { lines.emplace_back(line); });
    return lines;
}

} // namespace

TEST(FileFollower, FileAppearsLaterAndGrows) {
    TempDir dir;
    fs::path log = dir.path() / "console.log";
    FileFollower follower(log);
    EXPECT_EQ(follower.read_new(), "");
    EXPECT_EQ(follower.read_new(), "");
    EXPECT_EQ(follower.offset(), 0u);

    append(log, "");
    EXPECT_EQ(follower.read_new(), "");
    append(log, "Linux version 6.1.0\n");
    EXPECT_EQ(follower.read_new(), "Linux version 6.1.0\n");
    EXPECT_EQ(follower.read_new(), "");
    append(log, "RIG hel");
    append(log, "lo 1\n");
    EXPECT_EQ(follower.read_new(), "RIG hello 1\n");
    EXPECT_EQ(follower.offset(), 32u);
}

TEST(FileFollower, LimitPerCall) {
    TempDir dir;
    fs::path log = dir.path() / "results.log";
    std::string data;
    for (size_t i = 0; i < 300'000; ++i)
        data += static_cast<char>('a' + i % 26);
    append(log, data);

    FileFollower follower(log);
    std::string got = follower.read_new(1000);
    EXPECT_EQ(got.size(), 1000u);
    // More than the internal 64 KiB buffer in one call.
    std::string more = follower.read_new(150'000);
    EXPECT_EQ(more.size(), 150'000u);
    got += more;
    got += follower.read_new();
    EXPECT_EQ(got, data);
    EXPECT_EQ(follower.offset(), data.size());
    EXPECT_EQ(follower.read_new(), "");
}

TEST(TailBuffer, KeepsLastBytes) {
    rig::util::TailBuffer tail(5);
    EXPECT_EQ(tail.text(), "");
    tail.append("ab");
    tail.append("cd");
    EXPECT_EQ(tail.text(), "abcd");
    tail.append("efg");
    EXPECT_EQ(tail.text(), "cdefg");
    tail.append("0123456789");
    EXPECT_EQ(tail.text(), "56789");
    tail.append("");
    EXPECT_EQ(tail.text(), "56789");
    tail.append("XYZab");
    EXPECT_EQ(tail.text(), "XYZab");

    rig::util::TailBuffer none(0);
    none.append("anything");
    EXPECT_EQ(none.text(), "");

    // Many small pieces, read only at the end, as a process's output is.
    rig::util::TailBuffer output(4);
    std::string all;
    for (int i = 0; i < 100; ++i) {
        std::string piece = std::to_string(i);
        output.append(piece);
        all += piece;
    }
    EXPECT_EQ(output.take(), all.substr(all.size() - 4));
}

TEST(LineSplitter, SplitsAcrossFeeds) {
    LineSplitter splitter;
    EXPECT_TRUE(split_all(splitter, "first li").empty());
    EXPECT_EQ(split_all(splitter, "ne\n\nsecond\nthi"),
              (std::vector<std::string>{"first line", "", "second"}));
    EXPECT_EQ(split_all(splitter, "rd\n"), std::vector<std::string>{"third"});
}

TEST(LineSplitter, OverLongLinesAreCut) {
    LineSplitter splitter(4);
    EXPECT_EQ(split_all(splitter, "ab\ncdefgh\nij"), (std::vector<std::string>{"ab", "cdef"}));
    EXPECT_EQ(split_all(splitter, "klmnop\n"), std::vector<std::string>{"ijkl"});

    LineSplitter flood(4096);
    const std::string chunk(1 << 20, 'x');
    size_t lines = 0;
    for (int i = 0; i < 8; ++i)
        lines += split_all(flood, chunk).size();
    auto last = split_all(flood, "\nnext\n");
    EXPECT_EQ(lines, 0u);
    ASSERT_EQ(last.size(), 2u);
    EXPECT_EQ(last[0].size(), 4096u);
    EXPECT_EQ(last[1], "next");
}
