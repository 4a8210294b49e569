// SPDX-License-Identifier: MIT
// Tests of guest/: module load order, the cpio writer, the agent's record channel, job files.
#include "guest/cpio.hpp"
#include "guest/fuse.hpp"
#include "guest/initramfs.hpp"
#include "guest/job.hpp"
#include "guest/modules.hpp"
#include "guest/protocol.hpp"
#include "guest/root.hpp"
#include "proc/process.hpp"
#include "temp_dir.hpp"
#include "text_lines.hpp"
#include "util/base64.hpp"
#include "util/file.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

using namespace rig::guest;
namespace fs = std::filesystem;

namespace {

using rig::test::TempDir;

void write_text(const fs::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// RFC 4648 with padding, as `busybox base64 -w 0` writes it: the agent's side of the channel.
std::string b64(std::string_view bytes) {
    static const char k_alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t group = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
        if (i + 1 < bytes.size())
            group |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
        if (i + 2 < bytes.size())
            group |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
        out += k_alphabet[(group >> 18) & 63];
        out += k_alphabet[(group >> 12) & 63];
        out += i + 1 < bytes.size() ? k_alphabet[(group >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? k_alphabet[group & 63] : '=';
    }
    return out;
}

// Runs the real GNU cpio on an archive; the writer's own reading of its output proves nothing.
std::string run_cpio(const std::string& archive, std::vector<std::string> args) {
    TempDir dir;
    fs::path file = dir.path() / "archive.cpio";
    write_text(file, archive);
    std::vector<std::string> argv{"cpio", "--quiet", "-F", file.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = rig::proc::run(argv);
    if (!result) {
        ADD_FAILURE() << result.error().message;
        return {};
    }
    EXPECT_EQ(result->exit_code, 0) << result->err;
    return result->out;
}

using rig::test::lines_of;

// The fields of a `cpio -itv --numeric-uid-gid` line: mode, links, uid, gid, size or
// "major, minor", date (3 fields), name [-> target].
std::vector<std::string> words_of(const std::string& line) {
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string word; in >> word;)
        words.push_back(word);
    return words;
}

// The pieces `stream` in guests/init cuts a payload into: 576 base64 characters each.
std::vector<std::string> chunks_of(const std::string& payload) {
    std::vector<std::string> chunks;
    for (size_t i = 0; i < payload.size(); i += 432)
        chunks.push_back(payload.substr(i, 432));
    return chunks;
}

Record record(std::string type, std::vector<std::string> fields = {}) {
    return Record{std::move(type), std::move(fields)};
}

} // namespace

// ---------------------------------------------------------------- modules

// Debian 6.1.0-57-amd64's modules.dep, the lines the guest modules need (from depmod).
constexpr std::string_view k_debian_61_dep =
    "kernel/fs/netfs/netfs.ko:\n"
    "kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko\n"
    "kernel/fs/fuse/fuse.ko:\n"
    "kernel/fs/fuse/virtiofs.ko: kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko kernel/fs/fuse/fuse.ko\n"
    "kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/fscache/fscache.ko "
    "kernel/fs/netfs/netfs.ko\n"
    "kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/drivers/virtio/virtio_ring.ko:\n"
    "kernel/drivers/virtio/virtio_pci_modern_dev.ko:\n"
    "kernel/drivers/virtio/virtio_pci_legacy_dev.ko:\n"
    "kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko "
    "kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/drivers/misc/pvpanic/pvpanic.ko:\n"
    "kernel/drivers/misc/pvpanic/pvpanic-pci.ko: kernel/drivers/misc/pvpanic/pvpanic.ko\n"
    "kernel/drivers/char/virtio_console.ko: kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/net/9p/9pnet.ko:\n"
    "kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n";

constexpr std::string_view k_debian_61_builtin = "kernel/drivers/tty/serial/8250/8250.ko\n"
                                                 "kernel/drivers/tty/serial/8250/8250_base.ko\n";

TEST(Modules, ModuleName) {
    EXPECT_EQ(module_name("kernel/fs/9p/9p.ko"), "9p");
    EXPECT_EQ(module_name("kernel/fs/9p/9p.ko.xz"), "9p");
    EXPECT_EQ(module_name("kernel/drivers/misc/pvpanic/pvpanic-pci.ko.zst"), "pvpanic_pci");
    EXPECT_EQ(module_name("9pnet_virtio.ko"), "9pnet_virtio");
}

TEST(Modules, WithoutSignatureCutsExactlyTheAppendedBlock) {
    std::string elf = "\x7f"
                      "ELF body";
    std::string signature(300, 's');
    std::string info = {1, 2, 2, 0, 0, 0, 0, 0, 0, 0, 1, 44}; // sig_len 300, big-endian
    std::string signed_module = elf + signature + info + "~Module signature appended~\n";
    EXPECT_EQ(without_signature(signed_module), elf);
    EXPECT_EQ(without_signature(elf), elf); // unsigned: as it is
    // A length past the file's start is not a signature block rig can trust.
    std::string bogus =
        elf + std::string{0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0, 0, 0} + "~Module signature appended~\n";
    EXPECT_EQ(without_signature(bogus), bogus);
    EXPECT_EQ(without_signature("~Module signature appended~\n"), "~Module signature appended~\n");
}

TEST(Modules, ParseIndex) {
    auto index = parse_module_index("kernel/a/base.ko:\n"
                                    "\n"
                                    "not a dependency line\n"
                                    "kernel/a/top.ko:  kernel/a/mid.ko   kernel/a/base.ko  \n",
                                    "kernel/b/serial-core.ko\n\n  kernel/b/8250.ko  \n");
    ASSERT_EQ(index.deps.size(), 2u);
    EXPECT_EQ(index.deps[0].first, "kernel/a/base.ko");
    EXPECT_TRUE(index.deps[0].second.empty());
    EXPECT_EQ(index.deps[1].first, "kernel/a/top.ko");
    EXPECT_EQ(index.deps[1].second,
              (std::vector<std::string>{"kernel/a/mid.ko", "kernel/a/base.ko"}));
    EXPECT_EQ(index.builtin, (std::vector<std::string>{"serial_core", "8250"}));
}

TEST(Modules, DependenciesFirstSharedOnce) {
    auto index = parse_module_index("kernel/a/base.ko:\n"
                                    "kernel/a/mid-one.ko: kernel/a/base.ko\n"
                                    "kernel/a/top.ko: kernel/a/mid-one.ko kernel/a/base.ko\n"
                                    "kernel/a/other.ko.xz: kernel/a/base.ko\n",
                                    "");
    auto order = load_order(index, {"top", "other"});
    ASSERT_TRUE(order) << order.error().message;
    EXPECT_EQ(*order, (std::vector<std::string>{"kernel/a/base.ko", "kernel/a/mid-one.ko",
                                                "kernel/a/top.ko", "kernel/a/other.ko.xz"}));

    // Asking twice, or for a dependency already loaded, adds nothing.
    order = load_order(index, {"top", "mid-one", "top", "base"});
    ASSERT_TRUE(order);
    EXPECT_EQ(order->size(), 3u);
}

// 9p's stack as Debian 6.1 has it: the modules of a wave need none of each other.
TEST(Modules, WavesLoadAfterTheirDependencies) {
    auto index = parse_module_index("kernel/v/virtio_ring.ko:\n"
                                    "kernel/v/virtio.ko: kernel/v/virtio_ring.ko\n"
                                    "kernel/v/modern.ko:\n"
                                    "kernel/v/virtio_pci.ko: kernel/v/modern.ko kernel/v/virtio.ko "
                                    "kernel/v/virtio_ring.ko\n"
                                    "kernel/n/9pnet.ko:\n"
                                    "kernel/n/9pnet_virtio.ko: kernel/v/virtio.ko "
                                    "kernel/v/virtio_ring.ko kernel/n/9pnet.ko\n"
                                    "kernel/f/netfs.ko:\n"
                                    "kernel/f/fscache.ko: kernel/f/netfs.ko\n"
                                    "kernel/f/9p.ko: kernel/n/9pnet.ko kernel/f/fscache.ko "
                                    "kernel/f/netfs.ko\n"
                                    "kernel/m/pvpanic.ko:\n"
                                    "kernel/m/pvpanic-pci.ko: kernel/m/pvpanic.ko\n",
                                    "");
    auto order = load_order(index, {"virtio_pci", "9pnet_virtio", "9p", "pvpanic_pci"});
    ASSERT_TRUE(order) << order.error().message;
    auto waves = load_waves(index, *order);
    ASSERT_EQ(waves.size(), 3u);
    EXPECT_EQ(waves[0], (std::vector<std::string>{"kernel/v/virtio_ring.ko", "kernel/v/modern.ko",
                                                  "kernel/n/9pnet.ko", "kernel/f/netfs.ko",
                                                  "kernel/m/pvpanic.ko"}));
    EXPECT_EQ(waves[1], (std::vector<std::string>{"kernel/v/virtio.ko", "kernel/f/fscache.ko",
                                                  "kernel/m/pvpanic-pci.ko"}));
    EXPECT_EQ(waves[2], (std::vector<std::string>{"kernel/v/virtio_pci.ko",
                                                  "kernel/n/9pnet_virtio.ko", "kernel/f/9p.ko"}));

    // A dependency outside the order (built in, or not listed) holds nothing back.
    waves = load_waves(index, {"kernel/v/virtio.ko"});
    EXPECT_EQ(waves, (std::vector<std::vector<std::string>>{{"kernel/v/virtio.ko"}}));
    EXPECT_TRUE(load_waves(index, {}).empty());
}

TEST(Modules, DashAndUnderscoreAreTheSameName) {
    auto index = parse_module_index("kernel/a/base.ko:\n"
                                    "kernel/a/mid-one.ko: kernel/a/base.ko\n"
                                    "kernel/a/two_parts.ko:\n",
                                    "");
    for (const char* wanted : {"mid-one", "mid_one"}) {
        auto order = load_order(index, {wanted});
        ASSERT_TRUE(order) << wanted;
        EXPECT_EQ(*order, (std::vector<std::string>{"kernel/a/base.ko", "kernel/a/mid-one.ko"}));
    }
    auto order = load_order(index, {"two-parts"});
    ASSERT_TRUE(order);
    EXPECT_EQ(*order, std::vector<std::string>{"kernel/a/two_parts.ko"});
}

TEST(Modules, BuiltinNeedsNothing) {
    auto index =
        parse_module_index("kernel/a/base.ko:\n", "kernel/drivers/tty/serial/8250/8250.ko\n"
                                                  "kernel/drivers/virtio/virtio-pci.ko\n");
    auto order = load_order(index, {"8250", "virtio_pci", "virtio-pci"});
    ASSERT_TRUE(order) << order.error().message;
    EXPECT_TRUE(order->empty());
}

TEST(Modules, MissingModuleIsNamed) {
    auto index = parse_module_index(k_debian_61_dep, k_debian_61_builtin);
    auto order = load_order(index, {"9p", "no-such-fs"});
    ASSERT_FALSE(order);
    EXPECT_EQ(order.error().kind, rig::ErrorKind::infra);
    EXPECT_NE(order.error().message.find("'no-such-fs'"), std::string::npos)
        << order.error().message;
}

// A dependency's own dependencies come from its own line, even when the wanted module's
// line does not repeat them (lists written by hand are not always closed).
TEST(Modules, UnclosedListsAreWalked) {
    auto index = parse_module_index("kernel/top.ko: kernel/mid.ko\n"
                                    "kernel/mid.ko: kernel/low.ko\n"
                                    "kernel/low.ko:\n",
                                    "");
    auto order = load_order(index, {"top"});
    ASSERT_TRUE(order);
    EXPECT_EQ(*order,
              (std::vector<std::string>{"kernel/low.ko", "kernel/mid.ko", "kernel/top.ko"}));
}

// The order `modprobe -d ROOT -S 6.1.0-57-amd64 --show-depends -a 9pnet_virtio 9p virtiofs
// virtio_pci pvpanic_pci` printed, each module kept at its first appearance.
TEST(Modules, Debian61MatchesModprobe) {
    auto index = parse_module_index(k_debian_61_dep, k_debian_61_builtin);
    auto order = load_order(index, {"9pnet_virtio", "9p", "virtiofs", "virtio_pci", "pvpanic-pci"});
    ASSERT_TRUE(order) << order.error().message;
    EXPECT_EQ(*order, (std::vector<std::string>{
                          "kernel/drivers/virtio/virtio_ring.ko",
                          "kernel/drivers/virtio/virtio.ko",
                          "kernel/net/9p/9pnet.ko",
                          "kernel/net/9p/9pnet_virtio.ko",
                          "kernel/fs/netfs/netfs.ko",
                          "kernel/fs/fscache/fscache.ko",
                          "kernel/fs/9p/9p.ko",
                          "kernel/fs/fuse/fuse.ko",
                          "kernel/fs/fuse/virtiofs.ko",
                          "kernel/drivers/virtio/virtio_pci_modern_dev.ko",
                          "kernel/drivers/virtio/virtio_pci_legacy_dev.ko",
                          "kernel/drivers/virtio/virtio_pci.ko",
                          "kernel/drivers/misc/pvpanic/pvpanic.ko",
                          "kernel/drivers/misc/pvpanic/pvpanic-pci.ko",
                      }));
}

// 6.12: compressed modules, and virtio, virtio_pci, fuse and virtiofs built in.
TEST(Modules, Debian612CompressedAndBuiltin) {
    auto index = parse_module_index(
        "kernel/fs/netfs/netfs.ko.xz:\n"
        "kernel/fs/9p/9p.ko.xz: kernel/net/9p/9pnet.ko.xz kernel/fs/netfs/netfs.ko.xz\n"
        "kernel/net/9p/9pnet.ko.xz:\n"
        "kernel/net/9p/9pnet_virtio.ko.xz: kernel/net/9p/9pnet.ko.xz kernel/fs/netfs/netfs.ko.xz\n"
        "kernel/drivers/misc/pvpanic/pvpanic.ko.xz:\n"
        "kernel/drivers/misc/pvpanic/pvpanic-pci.ko.xz: "
        "kernel/drivers/misc/pvpanic/pvpanic.ko.xz\n",
        "kernel/drivers/virtio/virtio.ko\n"
        "kernel/drivers/virtio/virtio_ring.ko\n"
        "kernel/drivers/virtio/virtio_pci.ko\n"
        "kernel/fs/fuse/fuse.ko\n"
        "kernel/fs/fuse/virtiofs.ko\n");
    auto order = load_order(index, {"9pnet_virtio", "9p", "virtiofs", "virtio_pci", "pvpanic_pci"});
    ASSERT_TRUE(order) << order.error().message;
    EXPECT_EQ(*order, (std::vector<std::string>{
                          "kernel/fs/netfs/netfs.ko.xz",
                          "kernel/net/9p/9pnet.ko.xz",
                          "kernel/net/9p/9pnet_virtio.ko.xz",
                          "kernel/fs/9p/9p.ko.xz",
                          "kernel/drivers/misc/pvpanic/pvpanic.ko.xz",
                          "kernel/drivers/misc/pvpanic/pvpanic-pci.ko.xz",
                      }));
}

TEST(Modules, ReadIndexFromDirectory) {
    TempDir dir;
    auto missing = read_module_index(dir.path());
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find(dir.path().string()), std::string::npos);

    write_text(dir.path() / "modules.dep", k_debian_61_dep);
    write_text(dir.path() / "modules.builtin", k_debian_61_builtin);
    auto index = read_module_index(dir.path());
    ASSERT_TRUE(index) << index.error().message;
    EXPECT_EQ(index->deps.size(), 15u);
    EXPECT_EQ(index->builtin, (std::vector<std::string>{"8250", "8250_base"}));
}

// ---------------------------------------------------------------- cpio

namespace {

std::string sample_archive() {
    CpioWriter cpio;
    cpio.add_directory("bin");
    cpio.add_directory("dev", 0700);
    cpio.add_file("bin/busybox", "#!/bin/sh\necho hello\n", 0755);
    cpio.add_symlink("bin/sh", "busybox");
    cpio.add_char_device("dev/console", 5, 1);
    return cpio.finish();
}

} // namespace

TEST(Cpio, NewcLayout) {
    std::string archive = sample_archive();
    EXPECT_EQ(archive.substr(0, 6), "070701");
    EXPECT_EQ(archive.size() % 4, 0u);
    EXPECT_NE(archive.find("TRAILER!!!"), std::string::npos);
}

TEST(Cpio, ListedByRealCpio) {
    std::string archive = sample_archive();
    EXPECT_EQ(lines_of(run_cpio(archive, {"-it"})),
              (std::vector<std::string>{"bin", "dev", "bin/busybox", "bin/sh", "dev/console"}));

    auto lines = lines_of(run_cpio(archive, {"-itv", "--numeric-uid-gid"}));
    ASSERT_EQ(lines.size(), 5u);
    std::vector<std::vector<std::string>> entries;
    for (const auto& line : lines)
        entries.push_back(words_of(line));

    EXPECT_EQ(entries[0][0], "drwxr-xr-x");
    EXPECT_EQ(entries[0].back(), "bin");
    EXPECT_EQ(entries[1][0], "drwx------");

    EXPECT_EQ(entries[2][0], "-rwxr-xr-x");
    EXPECT_EQ(entries[2][2], "0"); // owner 0:0 whoever built it
    EXPECT_EQ(entries[2][3], "0");
    EXPECT_EQ(entries[2][4], "21");
    EXPECT_EQ(entries[2].back(), "bin/busybox");

    ASSERT_GE(entries[3].size(), 3u);
    EXPECT_EQ(entries[3][0], "lrwxrwxrwx");
    EXPECT_EQ(entries[3][4], "7"); // a symlink's size is its target's length
    EXPECT_EQ(entries[3][entries[3].size() - 3], "bin/sh");
    EXPECT_EQ(entries[3][entries[3].size() - 2], "->");
    EXPECT_EQ(entries[3].back(), "busybox");

    EXPECT_EQ(entries[4][0], "crw-------");
    EXPECT_EQ(entries[4][4], "5,");
    EXPECT_EQ(entries[4][5], "1");
    EXPECT_EQ(entries[4].back(), "dev/console");
}

TEST(Cpio, FileBytesSurviveExtraction) {
    CpioWriter cpio;
    std::string binary;
    for (int i = 0; i < 1000; ++i)
        binary += static_cast<char>(i * 7 % 256); // NULs and high bytes included
    cpio.add_file("odd-size", "abcde");
    cpio.add_file("blob", binary);
    std::string archive = cpio.finish();
    EXPECT_EQ(run_cpio(archive, {"-i", "--to-stdout", "blob"}), binary);
    EXPECT_EQ(run_cpio(archive, {"-i", "--to-stdout", "odd-size"}), "abcde");
}

TEST(Cpio, AddFileFrom) {
    TempDir dir;
    write_text(dir.path() / "source", "from disk\n");
    CpioWriter cpio;
    ASSERT_TRUE(cpio.add_file_from("etc/copy", dir.path() / "source", 0600));
    auto missing = cpio.add_file_from("etc/none", dir.path() / "absent", 0600);
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("absent"), std::string::npos);
    EXPECT_EQ(run_cpio(cpio.finish(), {"-i", "--to-stdout", "etc/copy"}), "from disk\n");
}

// The archive's hash is a cache key: the same inputs must give the same bytes, also from
// a writer that already finished one archive.
TEST(Cpio, ReproducibleBytes) {
    EXPECT_EQ(sample_archive(), sample_archive());
    CpioWriter cpio;
    cpio.add_file("a", "1");
    std::string first = cpio.finish();
    cpio.add_file("a", "1");
    EXPECT_EQ(cpio.finish(), first);
}

// ---------------------------------------------------------------- channel parser

TEST(Channel, RecordsSplitAcrossFeeds) {
    ChannelParser parser;
    EXPECT_TRUE(parser.feed("RIG st").empty());
    EXPECT_TRUE(parser.feed("art 12").empty());
    EXPECT_TRUE(parser.feed("3\r").empty());
    auto records = parser.feed("\nRIG end 456 0\r\nRIG done\n");
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[0].type, "start");
    EXPECT_EQ(records[0].fields, std::vector<std::string>{"123"});
    EXPECT_EQ(records[1].type, "end");
    EXPECT_EQ(records[1].fields, (std::vector<std::string>{"456", "0"}));
    EXPECT_EQ(records[2].type, "done");
    EXPECT_TRUE(records[2].fields.empty());
    EXPECT_EQ(parser.junk_lines(), 0u);
}

TEST(Channel, ByteAtATimeEqualsAllAtOnce) {
    const std::string stream = "RIG hello 2 6.1.0-57-amd64 run-1\r\nnoise\nRIG boot 5 uptime\n";
    ChannelParser whole;
    auto expected = whole.feed(stream);
    ChannelParser bytewise;
    std::vector<Record> got;
    for (char c : stream)
        for (auto& r : bytewise.feed(std::string_view(&c, 1)))
            got.push_back(std::move(r));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].type, expected[i].type);
        EXPECT_EQ(got[i].fields, expected[i].fields);
    }
    EXPECT_EQ(bytewise.junk_lines(), 1u);
}

TEST(Channel, JunkLinesCounted) {
    ChannelParser parser;
    auto records = parser.feed("[    1.234] console noise\n"
                               "\n"
                               "\r\n"
                               "RIGdone\n"
                               "rig done\n"
                               " RIG done\n"
                               "RIG done\n");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].type, "done");
    EXPECT_EQ(parser.junk_lines(), 4u); // empty lines are not junk
}

TEST(Channel, LongestLineKeptLongerDropped) {
    ChannelParser parser;
    std::string longest = "RIG warn " + std::string(ChannelParser::k_max_line - 9, 'a');
    ASSERT_EQ(longest.size(), ChannelParser::k_max_line);
    auto records = parser.feed(longest + "\n" + longest + "a\nRIG done\n");
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].type, "warn");
    EXPECT_EQ(records[1].type, "done");
    EXPECT_EQ(parser.junk_lines(), 1u);
}

// A flood without newlines must be dropped as it arrives: one junk line, nothing kept,
// and the next record still parses. Quadratic or buffering code would not finish in time.
TEST(Channel, HundredMegabytesOfJunk) {
    ChannelParser parser;
    const std::string chunk(1 << 20, 'x');
    auto started = std::chrono::steady_clock::now();
    size_t records = parser.feed("RIG start 1").size();
    for (int i = 0; i < 100; ++i)
        records += parser.feed(chunk).size();
    EXPECT_EQ(records, 0u);
    EXPECT_EQ(parser.junk_lines(), 0u); // not a line until its newline comes
    auto after = parser.feed("\nRIG done\n");
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].type, "done");
    EXPECT_EQ(parser.junk_lines(), 1u);

    // Short junk lines, 1 MB of them per chunk.
    std::string lines;
    while (lines.size() < (1 << 20))
        lines += "random junk from a confused guest\n";
    size_t count = 0;
    for (char c : lines)
        count += c == '\n';
    records = 0;
    for (int i = 0; i < 4; ++i)
        records += parser.feed(lines).size();
    EXPECT_EQ(records, 0u);
    EXPECT_EQ(parser.junk_lines(), 1 + 4 * count);
}

// ---------------------------------------------------------------- agent report

TEST(Report, HelloAndBoot) {
    AgentReport report;
    report.apply(record("hello", {"2", "6.1.0-57-amd64", "run-1"}));
    EXPECT_TRUE(report.hello);
    EXPECT_EQ(report.kernel_release, "6.1.0-57-amd64");
    report.apply(record("hello", {"2", "b64:" + b64("6.1.0 odd release"), "-"}));
    EXPECT_EQ(report.kernel_release, "6.1.0 odd release");
    report.apply(record("hello", {"2", "-", "-"}));
    EXPECT_EQ(report.kernel_release, "");
    report.apply(record("boot", {"1950000000", "timer_list"}));
    EXPECT_EQ(report.boot_ns, 1950000000u);
    EXPECT_EQ(report.malformed, 0u);
    report.apply(record("hello", {"2"}));
    EXPECT_EQ(report.malformed, 1u);
}

TEST(Report, StartEndAndDuration) {
    AgentReport report;
    EXPECT_EQ(report.workload_seconds(), 0);
    report.apply(record("start", {"3000000000"}));
    EXPECT_EQ(report.workload_seconds(), 0); // no end yet
    report.apply(record("end", {"5500000000", "0"}));
    EXPECT_EQ(report.start_ns, 3000000000u);
    EXPECT_EQ(report.end_ns, 5500000000u);
    EXPECT_EQ(report.exit_status, 0);
    EXPECT_DOUBLE_EQ(report.workload_seconds(), 2.5);
    report.apply(record("end", {"5500000000", "137"}));
    EXPECT_EQ(report.exit_status, 137);
    EXPECT_EQ(report.malformed, 0u);

    AgentReport backwards;
    backwards.apply(record("start", {"9"}));
    backwards.apply(record("end", {"8", "0"}));
    EXPECT_EQ(backwards.workload_seconds(), 0);
}

TEST(Report, StagesAreTheAgentsMilestonesOnly) {
    AgentReport report;
    for (const char* name : {"channel", "modules", "mounted", "collected"})
        report.apply(record("stage", {name, "4052608430"}));
    EXPECT_EQ(report.malformed, 0u);
    report.apply(record("stage", {"workload", "1"})); // not a milestone
    report.apply(record("stage", {"modules", "12x"}));
    report.apply(record("stage", {"modules"}));
    EXPECT_EQ(report.malformed, 3u);
}

TEST(Report, MalformedStartAndEnd) {
    AgentReport report;
    report.apply(record("start", {"12x"}));
    report.apply(record("start", {"1", "2"}));
    report.apply(record("start"));
    report.apply(record("end", {"5"}));
    report.apply(record("end", {"5", "1000"})); // no shell prints that status
    report.apply(record("end", {"5", "-1"}));
    report.apply(record("end", {"x", "0"}));
    EXPECT_EQ(report.malformed, 7u);
    EXPECT_FALSE(report.start_ns);
    EXPECT_FALSE(report.end_ns); // an end without its status is no end
    EXPECT_FALSE(report.exit_status);
}

// Found by the guest_output fuzzer: "RIG end 756g ok" after a good end erased it, so the
// sample read as never ended, and a later good end was news again (a second CPU mark).
TEST(Report, MalformedRecordKeepsWhatEarlierOnesSet) {
    AgentReport report;
    report.apply(record("boot", {"4", "uptime"}));
    report.apply(record("start", {"10"}));
    report.apply(record("end", {"30", "2"}));
    report.apply(record("output", {"512"}));
    report.apply(record("boot", {"x"}));
    report.apply(record("start", {"1e3"}));
    report.apply(record("end", {"756g", "ok"}));
    report.apply(record("end", {"40", "1000"}));
    report.apply(record("output", {"-1"}));
    EXPECT_EQ(report.malformed, 5u);
    EXPECT_EQ(report.boot_ns, 4u);
    EXPECT_EQ(report.start_ns, 10u);
    EXPECT_EQ(report.end_ns, 30u);
    EXPECT_EQ(report.exit_status, 2);
    EXPECT_EQ(report.output_bytes, 512u);
}

TEST(Report, OutputMountsTail) {
    AgentReport report;
    report.apply(record("output", {"123456"}));
    EXPECT_EQ(report.output_bytes, 123456u);

    // The agent streams /proc/mounts and the tail as base64 in 576-character records
    // (432 bytes each), each decoding alone; lines may straddle records.
    const std::string work = "work /newroot/run/rig/work 9p rw,relatime,dirsync,loose,"
                             "access=client,msize=512000,trans=virtio 0 0";
    std::string proc_mounts;
    for (int i = 0; i < 20; ++i)
        proc_mounts += "tmp" + std::to_string(i) + " /newroot/tmp" + std::to_string(i) +
                       " tmpfs rw,nosuid,nodev,relatime,mode=1777 0 0\n";
    proc_mounts += work + "\n";
    auto stream = [&](const char* type, const std::string& text) {
        for (const auto& chunk : chunks_of(text))
            report.apply(record(type, {b64(chunk)}));
    };
    stream("mounts", proc_mounts);
    EXPECT_EQ(report.mounts_text, proc_mounts);
    auto mounts = report.mounts();
    ASSERT_EQ(mounts.size(), 21u);
    EXPECT_EQ(mounts.front(), "tmp0 /newroot/tmp0 tmpfs rw,nosuid,nodev,relatime,mode=1777 0 0");
    EXPECT_EQ(mounts.back(), work);

    std::string tail;
    for (int i = 0; i < 300; ++i)
        tail += "line " + std::to_string(i) + " of the workload output\n";
    stream("tail", tail);
    EXPECT_EQ(report.tail, tail);
    EXPECT_EQ(report.malformed, 0u);

    report.apply(record("mounts", {"not base64!"}));
    report.apply(record("mounts", {b64("a"), b64("b")}));
    report.apply(record("mounts"));
    report.apply(record("tail", {"abc"}));
    report.apply(record("output", {"1", "2"}));
    EXPECT_EQ(report.malformed, 5u);
    EXPECT_EQ(report.mounts_text, proc_mounts);
    EXPECT_EQ(report.tail, tail);

    // A failed sample's whole kernel log, streamed the same way.
    std::string kernel_log;
    for (int i = 0; i < 300; ++i)
        kernel_log += "<6>[    1.000000] line " + std::to_string(i) + "\n";
    stream("klog", kernel_log);
    EXPECT_EQ(report.kernel_log, kernel_log);
    report.apply(record("klog", {"not base64!"}));
    EXPECT_EQ(report.malformed, 6u);
    EXPECT_EQ(report.mounts_text, proc_mounts);
    EXPECT_EQ(report.tail, tail);
}

// The outputs' manifests arrive as streams, each whole once its `hashed` record came.
TEST(Report, OutputsManifests) {
    AgentReport report;
    const std::string guest = std::string(64, 'a') + "  prog\n";
    const std::string served = std::string(64, 'b') + "  prog\n";
    report.apply(record("outputs", {b64(guest)}));
    EXPECT_FALSE(report.outputs_hashed);
    report.apply(record("hashed", {"outputs"}));
    report.apply(record("served", {b64(served)}));
    report.apply(record("hashed", {"served"}));
    EXPECT_EQ(report.outputs_text, guest);
    EXPECT_EQ(report.served_text, served);
    EXPECT_TRUE(report.outputs_hashed && report.served_hashed);
    report.apply(record("hashed", {"other"}));
    report.apply(record("hashed"));
    report.apply(record("outputs", {"not base64!"}));
    EXPECT_EQ(report.malformed, 3u);
}

// The coherency probe: a change the guest asks for, and what it saw of each file.
TEST(Report, CoherencyRecords) {
    AgentReport report;
    report.apply(record("change", {"c-0001"}));
    report.apply(record("stale", {"c-0001", "12", "980000000", "1"}));
    report.apply(record("stale", {"c-0002", "400", "2000000000", "0"}));
    EXPECT_EQ(report.change_requests, (std::vector<std::string>{"c-0001"}));
    ASSERT_EQ(report.stale.size(), 2u);
    EXPECT_EQ(report.stale[0].name, "c-0001");
    EXPECT_EQ(report.stale[0].stale_reads, 12u);
    EXPECT_EQ(report.stale[0].stale_ns, 980000000u);
    EXPECT_TRUE(report.stale[0].fresh);
    EXPECT_FALSE(report.stale[1].fresh);
    report.apply(record("stale", {"c-0003", "1", "1", "yes"}));
    report.apply(record("stale", {"c-0003", "-1", "1", "1"}));
    report.apply(record("stale", {"c 3", "1", "1", "1"}));
    report.apply(record("change", {"a", "b"}));
    EXPECT_EQ(report.malformed, 4u);
    // A guest that floods asks for no more than the plan could hold.
    for (int i = 0; i < 1000; ++i)
        report.apply(record("change", {"c-0001"}));
    EXPECT_EQ(report.change_requests.size(), AgentReport::k_max_coherency);
}

// A check after a phase: the workload's pause, the host asked to hash, and the guest's view
// kept by check.
TEST(Report, ChecksAfterPhasesPauseTheWorkloadAndKeepTheirOwnManifests) {
    AgentReport report;
    report.apply(record("start", {"1000000000"}));
    report.apply(record("pause", {"2000000000"}));
    report.apply(record("pause", {"2100000000"})); // one at a time
    report.apply(record("outputs", {rig::util::base64_encode("aa  a.o\n")}));
    report.apply(record("hashed", {"outputs", "build"}));
    report.apply(record("hash", {"build"}));
    report.apply(record("resume", {"2500000000"}));
    report.apply(record("resume", {"2600000000"})); // nothing paused
    report.apply(record("outputs", {rig::util::base64_encode("bb  a.o\n")}));
    report.apply(record("hashed", {"outputs"}));
    report.apply(record("end", {"4000000000", "0"}));
    EXPECT_EQ(report.malformed, 2u);
    EXPECT_EQ(report.outputs_at.at("build"), "aa  a.o\n");
    EXPECT_EQ(report.outputs_text, "bb  a.o\n");
    EXPECT_TRUE(report.outputs_hashed);
    EXPECT_EQ(report.hash_requests, std::vector<std::string>{"build"});
    // 3 s from start to end, half a second of it paused.
    EXPECT_DOUBLE_EQ(report.workload_seconds(), 2.5);
    report.apply(record("hashed", {"outputs", "a.b"}));
    report.apply(record("hash", {"../x"}));
    EXPECT_EQ(report.malformed, 4u);
}

TEST(Report, Metrics) {
    AgentReport report;
    report.apply(record("metric", {"compile_time", "12.5", "s"}));
    report.apply(record("metric", {"delta", "-3e2", "ms"}));
    ASSERT_EQ(report.metrics.size(), 2u);
    EXPECT_EQ(report.metrics[0].name, "compile_time");
    EXPECT_DOUBLE_EQ(report.metrics[0].value, 12.5);
    EXPECT_EQ(report.metrics[0].unit, "s");
    EXPECT_DOUBLE_EQ(report.metrics[1].value, -300);
    report.apply(record("metric", {"x", "12.5s", "s"}));
    report.apply(record("metric", {"x", "", "s"}));
    report.apply(record("metric", {"x", "1"}));
    EXPECT_EQ(report.malformed, 3u);
    EXPECT_EQ(report.metrics.size(), 2u);
}

// guests/init forwards any value matching [-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?, so a
// workload printing "rig-metric speed +1.5 x" is valid on the guest's side.
TEST(Report, MetricWithPlusSign) {
    AgentReport report;
    report.apply(record("metric", {"speed", "+1.5", "x"}));
    EXPECT_EQ(report.malformed, 0u);
    ASSERT_EQ(report.metrics.size(), 1u);
    EXPECT_DOUBLE_EQ(report.metrics[0].value, 1.5);
}

// Found by the guest_output fuzzer: a name with a byte no token has was kept (and JSON
// reports take UTF-8 only), and from_chars reads "nan", which the store refuses.
TEST(Report, MetricNamesAndUnitsAreTokensAndValuesFinite) {
    AgentReport report;
    report.apply(record("metric", {"noop/guest.vm.pgpg\xcdout", "0", "KiB"}));
    report.apply(record("metric", {"", "1", "s"})); // "RIG metric  1 s"
    report.apply(record("metric", {"x", "1", "s\t"}));
    for (const char* value : {"nan", "-nan", "inf", "-inf", "infinity", "+inf"})
        report.apply(record("metric", {"x", value, "s"}));
    EXPECT_EQ(report.malformed, 9u);
    EXPECT_TRUE(report.metrics.empty());
    report.apply(record("metric", {"noop/guest.vm.pgpgout", "0", "KiB"}));
    report.apply(record("metric", {"a:b,c=d%e+f", "-1e-3", "%"}));
    EXPECT_EQ(report.metrics.size(), 2u);
    EXPECT_EQ(report.malformed, 9u);
}

// Like start and end, a boot or output record whose number does not parse is malformed.
TEST(Report, NonNumericBootAndOutputAreMalformed) {
    AgentReport report;
    report.apply(record("boot", {"soon", "uptime"}));
    report.apply(record("output", {"lots"}));
    EXPECT_EQ(report.malformed, 2u);
}

TEST(Report, ModulesErrorsDoneWarn) {
    AgentReport report;
    report.apply(record("module", {"9p", "ok"}));
    report.apply(record("module", {"fuse", "present"}));
    EXPECT_TRUE(report.module_failures.empty());
    report.apply(
        record("module", {"virtiofs", "fail", b64("insmod: can't insert: Unknown symbol")}));
    ASSERT_EQ(report.module_failures.size(), 1u);
    EXPECT_EQ(report.module_failures[0], "virtiofs: insmod: can't insert: Unknown symbol");

    report.apply(
        record("error", {"mount-work", b64("mount: mounting work failed: Invalid argument")}));
    EXPECT_EQ(report.setup_error, "mount-work: mount: mounting work failed: Invalid argument");

    report.apply(record("warn", {"unknown-job-key", "FOO"}));
    report.apply(record("warn", {"umount-work", b64("umount: busy")}));
    EXPECT_FALSE(report.done);
    report.apply(record("done"));
    EXPECT_TRUE(report.done);
    EXPECT_EQ(report.malformed, 0u);

    report.apply(record("module", {"9p"}));
    report.apply(record("error", {"mount-work"}));
    report.apply(record("bogus", {"1"}));
    report.apply(record(""));
    EXPECT_EQ(report.malformed, 4u);
}

// A guest flooding the channel cannot grow the report without bound.
TEST(Report, ListsAreCapped) {
    AgentReport report;
    const std::string chunk = b64(std::string(432, 't'));
    const std::string fail = b64("failed");
    for (int i = 0; i < 5000; ++i) {
        report.apply(record("mounts", {chunk}));
        report.apply(record("metric", {"m", std::to_string(i), "s"}));
        report.apply(record("module", {"m" + std::to_string(i), "fail", fail}));
        report.apply(record("tail", {chunk}));
    }
    EXPECT_LE(report.mounts_text.size(), 64u * 1024);
    EXPECT_GT(report.mounts_text.size(), 60u * 1024);
    ASSERT_EQ(report.metrics.size(), 3000u);
    EXPECT_EQ(report.metrics.back().value, 2999); // the first 3000 are kept
    EXPECT_EQ(report.module_failures.size(), 100u);
    EXPECT_LE(report.tail.size(), 64u * 1024);
    EXPECT_GT(report.tail.size(), 60u * 1024);
    EXPECT_EQ(report.malformed, 0u);
}

// Past the cap a stream is cut, never spliced: a short last record that still fits after
// a dropped one would join two distant parts into a line that never existed.
TEST(Report, CappedStreamHasNoHoles) {
    std::string stream;
    for (int i = 0; stream.size() < 100 * 1024; ++i)
        stream += "tmp" + std::to_string(i) + " /mnt/" + std::to_string(i) + " tmpfs rw 0 0\n";
    stream.resize(240 * 432);
    stream += "x"; // a one-byte last record, which fits under any cap
    AgentReport report;
    for (const auto& chunk : chunks_of(stream)) {
        report.apply(record("mounts", {b64(chunk)}));
        report.apply(record("tail", {b64(chunk)}));
    }
    // A prefix of the stream, compared as a bool: a failure must not print 64 KiB.
    auto is_prefix = [&](const std::string& kept) {
        return !kept.empty() && stream.compare(0, kept.size(), kept) == 0;
    };
    EXPECT_TRUE(is_prefix(report.mounts_text))
        << "ends with: " << report.mounts_text.substr(report.mounts_text.size() - 40);
    EXPECT_TRUE(is_prefix(report.tail))
        << "ends with: " << report.tail.substr(report.tail.size() - 40);
}

TEST(Report, FindMount) {
    std::vector<std::string> mounts{
        "rootfs / rootfs rw 0 0",
        "broken",
        "hostroot /hostroot 9p ro,relatime,cache=loose,access=client,msize=512000,trans=virtio 0 0",
        "work /newroot/run/rig/work 9p rw,relatime,msize=512000,trans=virtio 0 0",
    };
    auto work = find_mount(mounts, "/newroot/run/rig/work");
    ASSERT_TRUE(work);
    EXPECT_EQ(work->source, "work");
    EXPECT_EQ(work->mount_point, "/newroot/run/rig/work");
    EXPECT_EQ(work->fstype, "9p");
    EXPECT_EQ(work->options, "rw,relatime,msize=512000,trans=virtio");
    EXPECT_EQ(find_mount(mounts, "/")->fstype, "rootfs");
    EXPECT_FALSE(find_mount(mounts, "/newroot"));
    EXPECT_FALSE(find_mount(mounts, "/newroot/run/rig"));
    EXPECT_FALSE(find_mount({}, "/work"));
}

// ---------------------------------------------------------------- job

namespace {

rig::core::Cell cell_with(std::map<std::string, std::string> params) {
    rig::core::Cell cell;
    cell.params = std::move(params);
    return cell;
}

Job sample_job() {
    Job job;
    job.run_label = "run-7-cell-abc";
    job.fs = rig::core::find_fs("9p");
    job.work_options = "trans=virtio,version=9p2000.L,msize=512000";
    job.workload_timeout = std::chrono::seconds(600);
    job.workload_script = "make -j2";
    return job;
}

} // namespace

TEST(Job, WorkMountOptions) {
    EXPECT_EQ(rig::core::work_mount_options(cell_with({{"fs", "9p"}})),
              "trans=virtio,version=9p2000.L");
    EXPECT_EQ(rig::core::work_mount_options(cell_with({})), "trans=virtio,version=9p2000.L");
    EXPECT_EQ(rig::core::work_mount_options(cell_with({{"fs", "9p"}, {"msize", "4186112"}})),
              "trans=virtio,version=9p2000.L,msize=4186112");
    EXPECT_EQ(rig::core::work_mount_options(cell_with({{"fs", "9p"}, {"cache", "none"}})),
              "trans=virtio,version=9p2000.L,cache=none");
    EXPECT_EQ(rig::core::work_mount_options(
                  cell_with({{"fs", "9p"}, {"msize", "8192"}, {"cache", "loose"}})),
              "trans=virtio,version=9p2000.L,msize=8192,cache=loose");
    // virtiofs takes its cache mode from virtiofsd, not from mount -o.
    EXPECT_EQ(rig::core::work_mount_options(cell_with({{"fs", "virtiofs"}, {"cache", "always"}})),
              "");
}

TEST(Job, JobFile) {
    auto text = job_file(sample_job());
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text, "RUN_ID=run-7-cell-abc\n"
                     "MODULES=" +
                         module_list_path(*rig::core::find_fs("9p"), rig::core::Machine::q35) +
                         "\n"
                         "WORK_MOUNT=kernel\n"
                         "WORK_FSTYPE=9p\n"
                         "WORK_TAG=work\n"
                         // 9p names its share in its attach, for the host's trace.
                         "WORK_OPTS=trans=virtio,version=9p2000.L,msize=512000,aname=work\n"
                         "WORK_MOUNTPOINT=" +
                         k_work_mount_point +
                         "\n"
                         "WORKLOAD_TIMEOUT=600\n");

    Job virtiofs = sample_job();
    virtiofs.fs = rig::core::find_fs("virtiofs");
    virtiofs.work_options = "";
    text = job_file(virtiofs);
    ASSERT_TRUE(text);
    EXPECT_NE(text->find("\nMODULES=/etc/rig/modules-virtiofs\n"), std::string::npos);
    // On microvm the agent loads the list with virtio's MMIO transport.
    virtiofs.machine = rig::core::Machine::microvm;
    text = job_file(virtiofs);
    ASSERT_TRUE(text);
    EXPECT_NE(text->find("\nMODULES=/etc/rig/modules-virtiofs-microvm\n"), std::string::npos);
    EXPECT_NE(text->find("\nWORK_FSTYPE=virtiofs\n"), std::string::npos);
    EXPECT_NE(text->find("\nWORK_OPTS=\n"), std::string::npos); // empty: mount without -o
}

TEST(Job, TheGuestRootsSharesAndLinksTravelAsPlainPairs) {
    Job job = sample_job();
    job.root_shares = {{k_usr_tag, "/usr"}, {k_etc_tag, "/etc"}, {"hostpath0", "/opt/tools"}};
    job.root_links = {{"bin", "usr/bin"}, {"lib64", "usr/lib64"}};
    auto text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nROOT_SHARES=rootusr:/usr rootetc:/etc hostpath0:/opt/tools\n"),
              std::string::npos);
    EXPECT_NE(text->find("\nROOT_LINKS=bin:usr/bin lib64:usr/lib64\n"), std::string::npos);
    for (const char* bad : {"/opt/a b", "/opt/../etc", "/opt/$(x)", ""}) {
        job.root_shares = {{"hostpath0", bad}};
        EXPECT_FALSE(job_file(job)) << bad;
    }
}

TEST(Job, TheCoherencyProbeTravelsAsWordsWithItsAckShareUnlessFuseServesItself) {
    Job job = sample_job();
    job.coherency = "c-0001:rewrite c-0002:delete";
    job.coherency_window = std::chrono::milliseconds(1500);
    auto text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nCOHERENCY=c-0001:rewrite c-0002:delete\nCOHERENCY_WINDOW_MS=1500\n"
                         "ACK_TAG=rigack\n"),
              std::string::npos)
        << *text;
    job.fs = rig::core::find_fs("fuse");
    text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(text->find("ACK_TAG="), std::string::npos);
    for (const char* bad : {"c-0001:rewrite;reboot", "c-0001:rewrite:a.b", "c-0001:$(x)"}) {
        job.coherency = bad;
        EXPECT_FALSE(job_file(job)) << bad;
    }
}

// A check after a phase: its phases travel as words, and the host hashes the server's copy
// there when asked, through the ack share, unless fuse's daemon is the server.
TEST(Job, ChecksAfterPhasesTravelWithTheAckShareTheHostAnswersBy) {
    Job job = sample_job();
    job.outputs = {"*.o"};
    job.check_after = {"build", "touch"};
    auto text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nCHECK_AFTER=build touch\nACK_TAG=rigack\nACK_WAIT_MS=10000\n"),
              std::string::npos)
        << *text;
    job.outputs.clear();
    text = job_file(job);
    ASSERT_TRUE(text);
    EXPECT_EQ(text->find("ACK_TAG="), std::string::npos);
    job.check_after = {"a b"};
    EXPECT_FALSE(job_file(job));
}

TEST(GuestRoot, OnlySystemAccountsWithoutPasswordsOrMembers) {
    std::string passwd = "root:x:0:0:root:/root:/bin/bash\n"
                         "alice:$6$salt$hash:1000:1000:Alice,,,:/home/alice:/bin/bash\n"
                         "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                         "daemon:*:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
    EXPECT_EQ(system_accounts(passwd),
              "root:x:0:0:root:/root:/bin/bash\n"
              "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
              "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n");
    EXPECT_EQ(system_accounts("sudo:x:27:alice,bob\nalice:x:1000:\n"), "sudo:x:27:\n");
}

TEST(GuestRoot, UsrTheLinksOfMergedUsrAndACopyOfEtcWithoutSecrets) {
    rig::test::TempDir host;
    rig::test::TempDir cache;
    namespace fs = std::filesystem;
    fs::create_directories(host.path() / "usr/bin");
    fs::create_directories(host.path() / "etc/alternatives");
    fs::create_directories(host.path() / "etc/ssh");
    fs::create_directory_symlink("usr/bin", host.path() / "bin");
    fs::create_directory_symlink("usr/sbin", host.path() / "sbin");
    fs::create_directory_symlink("usr/lib", host.path() / "lib");
    fs::create_symlink("/usr/bin/gcc-12", host.path() / "etc/alternatives/cc");
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(host.path() / name) << text;
    };
    write("etc/ld.so.cache", "cache");
    write("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n");
    write("etc/group", "root:x:0:\n");
    write("etc/shadow", "root:$6$secret:19000:0:99999:7:::\n");
    write("etc/ssh/ssh_host_ed25519_key", "PRIVATE");

    auto root = prepare_guest_root(cache.path(), host.path());
    ASSERT_TRUE(root) << root.error().message;
    EXPECT_EQ(root->usr, host.path() / "usr");
    EXPECT_EQ(root->links, (std::vector<std::pair<std::string, std::string>>{
                               {"bin", "usr/bin"}, {"sbin", "usr/sbin"}, {"lib", "usr/lib"}}));
    const fs::path& etc = root->etc;
    EXPECT_EQ(rig::util::read_file(etc / "ld.so.cache"), "cache");
    EXPECT_EQ(fs::read_symlink(etc / "alternatives/cc"), "/usr/bin/gcc-12");
    EXPECT_EQ(rig::util::read_file(etc / "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
    EXPECT_FALSE(fs::exists(etc / "shadow"));
    EXPECT_FALSE(fs::exists(etc / "ssh"));
    EXPECT_TRUE(etc.string().rfind(cache.path().string(), 0) == 0);

    // The same host gives the same copy; a changed one another.
    auto again = prepare_guest_root(cache.path(), host.path());
    ASSERT_TRUE(again);
    EXPECT_EQ(again->etc, etc);
    write("etc/ld.so.cache", "cache 2");
    auto changed = prepare_guest_root(cache.path(), host.path());
    ASSERT_TRUE(changed);
    EXPECT_NE(changed->etc, etc);

    // Without merged /usr the guest would have no shell: said, not booted.
    fs::remove(host.path() / "bin");
    fs::create_directory(host.path() / "bin");
    auto unmerged = prepare_guest_root(cache.path(), host.path());
    ASSERT_FALSE(unmerged);
    EXPECT_NE(unmerged.error().message.find("merged-/usr"), std::string::npos)
        << unmerged.error().message;
}

TEST(Job, NewlineInValueRefused) {
    Job job = sample_job();
    job.run_label = "run\nWORK_FSTYPE=none";
    auto text = job_file(job);
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().kind, rig::ErrorKind::config);
    EXPECT_NE(text.error().message.find("RUN_ID"), std::string::npos) << text.error().message;

    job = sample_job();
    job.work_options = std::string("cache=loose\0x", 13);
    EXPECT_FALSE(job_file(job));
    EXPECT_FALSE(job_archive(job));

    // The workload is a file of its own: newlines are its normal content.
    job = sample_job();
    job.workload_script = "cd src\nmake -j2";
    EXPECT_TRUE(job_archive(job));
}

TEST(Job, ArchiveHoldsJobAndWorkload) {
    Job job = sample_job();
    job.workload_script = "cd src\nmake -j2";
    auto archive = job_archive(job);
    ASSERT_TRUE(archive) << archive.error().message;
    EXPECT_EQ(lines_of(run_cpio(*archive, {"-it"})),
              (std::vector<std::string>{"etc", "etc/rig", "etc/rig/job", "etc/rig/workload.sh"}));
    EXPECT_EQ(run_cpio(*archive, {"-i", "--to-stdout", "etc/rig/job"}), *job_file(job));
    EXPECT_EQ(run_cpio(*archive, {"-i", "--to-stdout", "etc/rig/workload.sh"}),
              "cd src\nmake -j2\n");
}

TEST(Job, FuseCells) {
    rig::core::Cell cell = cell_with({{"fs", "fuse"},
                                      {"entry_timeout", "0.5"},
                                      {"attr_timeout", "0"},
                                      {"keep_cache", "true"},
                                      {"direct_io", "false"}});
    // The 9p share of a fuse cell is only copied into the guest: uncached.
    EXPECT_EQ(rig::core::work_mount_options(cell), "trans=virtio,version=9p2000.L,cache=none");
    EXPECT_EQ(rig::core::daemon_arguments(cell),
              (std::vector<std::string>{"--entry-timeout", "0.5", "--attr-timeout", "0",
                                        "--keep-cache"}));
    EXPECT_TRUE(rig::core::daemon_arguments(cell_with({{"fs", "fuse"}})).empty());

    Job job = sample_job();
    job.fs = rig::core::find_fs("fuse");
    job.work_options = rig::core::work_mount_options(cell);
    job.fuse_daemon = "/opt/rig/libexec/rig/rig-fuse";
    job.fuse_args = rig::core::daemon_arguments(cell);
    auto text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nMODULES=/etc/rig/modules-fuse\n"), std::string::npos) << *text;
    EXPECT_NE(text->find("\nWORK_MOUNT=fuse-daemon\n"), std::string::npos);
    EXPECT_NE(text->find("\nWORK_OPTS=trans=virtio,version=9p2000.L,cache=none,aname=work\n"),
              std::string::npos);
    // The guest runs its own copy from the job archive, never the host's path.
    EXPECT_NE(text->find("\nFUSE_DAEMON=/run/rig/rig-fuse\n"), std::string::npos);
    EXPECT_NE(text->find("\nFUSE_ARGS=--entry-timeout 0.5 --attr-timeout 0 --keep-cache\n"),
              std::string::npos);
    EXPECT_NE(text->find("\nPATHS_TOP=5\n"), std::string::npos) << *text;
    // The archive carries the daemon itself, executable.
    job.fuse_daemon = "/bin/true";
    auto archive = job_archive(job);
    ASSERT_TRUE(archive) << archive.error().message;
    EXPECT_EQ(run_cpio(*archive, {"-i", "--to-stdout", "etc/rig/rig-fuse"}),
              rig::util::read_file("/bin/true"));
    EXPECT_EQ(run_cpio(*archive, {"-itv", "etc/rig/rig-fuse"}).substr(0, 10), "-rwxr-xr-x");
    job.fuse_daemon = "/nonexistent/rig-fuse";
    EXPECT_FALSE(job_archive(job));
    // 9p jobs carry no fuse keys.
    EXPECT_EQ(job_file(sample_job())->find("FUSE_"), std::string::npos);
    // An argument with a space would split into two tokens in the agent: refused.
    job.fuse_args = {"--attr-timeout", "1 --direct-io"};
    EXPECT_FALSE(job_file(job));
}

TEST(Modules, FuseCellsLoadFuse) {
    const auto modules =
        guest_modules(*rig::core::find_fs("fuse"), rig::core::Machine::q35).required;
    EXPECT_NE(std::find(modules.begin(), modules.end(), "fuse"), modules.end());
    // The guest root is 9p whatever the cell's filesystem.
    EXPECT_NE(std::find(modules.begin(), modules.end(), "9p"), modules.end());
    EXPECT_EQ(module_list_path(*rig::core::find_fs("fuse"), rig::core::Machine::q35),
              "/etc/rig/modules-fuse");
}

TEST(Modules, MicrovmLoadsVirtioOverMmio) {
    const ModuleSet q35 = guest_modules(*rig::core::find_fs("9p"), rig::core::Machine::q35);
    const ModuleSet microvm = guest_modules(*rig::core::find_fs("9p"), rig::core::Machine::microvm);
    auto has = [](const std::vector<std::string>& names, const char* name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    EXPECT_TRUE(has(q35.required, "virtio_pci"));
    EXPECT_FALSE(has(q35.required, "virtio_mmio"));
    EXPECT_TRUE(has(microvm.required, "virtio_mmio"));
    EXPECT_FALSE(has(microvm.required, "virtio_pci"));
    EXPECT_TRUE(has(microvm.optional, "pvpanic_mmio"));
    EXPECT_EQ(module_list_path(*rig::core::find_fs("9p"), rig::core::Machine::microvm),
              "/etc/rig/modules-9p-microvm");
}

// microvm's devices are found through ACPI, which only a Debian kernel is known to have,
// and on virtio-mmio, which the kernel must have as a module or built in.
TEST(Modules, OnlyADebianKernelWithVirtioMmioBootsMicrovm) {
    TempDir dir;
    auto write = [&](const std::string& dep, const std::string& builtin) {
        std::ofstream(dir.path() / "modules.dep") << dep;
        std::ofstream(dir.path() / "modules.builtin") << builtin;
    };
    rig::kernel::Artifact kernel;
    kernel.modules_dir = dir.path();
    kernel.package = "linux-image-6.1.0-57-amd64";
    write("kernel/drivers/virtio/virtio_mmio.ko: kernel/drivers/virtio/virtio.ko\n"
          "kernel/drivers/virtio/virtio.ko:\n",
          "");
    EXPECT_TRUE(kernel_boots_microvm(kernel));
    write("kernel/drivers/virtio/virtio.ko:\n", "kernel/drivers/virtio/virtio_mmio.ko\n");
    EXPECT_TRUE(kernel_boots_microvm(kernel));
    write("kernel/drivers/virtio/virtio_pci.ko:\n", "");
    EXPECT_FALSE(kernel_boots_microvm(kernel));
    write("kernel/drivers/virtio/virtio_mmio.ko.xz:\n", "");
    EXPECT_TRUE(kernel_boots_microvm(kernel));
    kernel.package.clear(); // a git or image: kernel
    EXPECT_FALSE(kernel_boots_microvm(kernel));
}

TEST(Job, PhasesAndMarks) {
    Job job = sample_job();
    job.mark_phases = true;
    job.phase_scripts = {{"build", "make -j2"}, {"no-op_2", "make -j2"}};
    auto text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nMARK_TAG=rigmark\n"), std::string::npos) << *text;
    // Only a counter that sees the work share alone wants the marks there too.
    EXPECT_EQ(text->find("MARK_WORK"), std::string::npos) << *text;
    job.fs = rig::core::find_fs("virtiofs");
    EXPECT_NE(job_file(job)->find("\nMARK_WORK=1\n"), std::string::npos);
    job.fs = rig::core::find_fs("9p");
    EXPECT_NE(text->find("\nPHASES=build no-op_2\n"), std::string::npos) << *text;
    auto archive = job_archive(job);
    ASSERT_TRUE(archive);
    EXPECT_EQ(run_cpio(*archive, {"-i", "--to-stdout", "etc/rig/phase-no-op_2.sh"}), "make -j2\n");

    // A name is a file name in the guest and a word in the agent's loop.
    for (std::string bad : {"a b", "../x", "", "a;b"}) {
        job.phase_scripts = {{bad, "true"}};
        EXPECT_FALSE(job_file(job)) << bad;
        EXPECT_FALSE(job_archive(job)) << bad;
    }
}

TEST(Report, Phases) {
    AgentReport report;
    report.apply(record("phase", {"build", "1000000000", "3500000000", "0"}));
    report.apply(record("phase", {"noop", "4000000000", "4250000000", "2"}));
    ASSERT_EQ(report.phases.size(), 2u);
    EXPECT_EQ(report.phases[0].name, "build");
    EXPECT_DOUBLE_EQ(report.phases[0].seconds(), 2.5);
    EXPECT_EQ(report.phases[1].exit_status, 2);
    // A name that could not have come from the host, or fields that do not parse.
    report.apply(record("phase", {"a/b", "1", "2", "0"}));
    report.apply(record("phase", {"x", "1", "two", "0"}));
    report.apply(record("phase", {"x", "1", "2"}));
    EXPECT_EQ(report.malformed, 3u);
    EXPECT_EQ(report.phases.size(), 2u);
}

TEST(Job, ScratchDiskAsksTheAgentToLoadItsDriver) {
    Job job = sample_job();
    EXPECT_EQ(job_file(job)->find("SCRATCH_MODULES"), std::string::npos);
    job.scratch = true;
    auto text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nSCRATCH_MODULES=/etc/rig/modules-scratch\n"), std::string::npos)
        << *text;
    EXPECT_EQ(scratch_modules().optional, std::vector<std::string>{"virtio_blk"});
    EXPECT_TRUE(scratch_modules().required.empty());
}

TEST(Job, AProfileTravelsAsGlobsTheAgentChecksAgain) {
    Job job = sample_job();
    EXPECT_EQ(job_file(job)->find("PROFILE"), std::string::npos);
    job.profile_globs = {"v9fs_*", "p9_*"};
    auto text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nPROFILE=v9fs_* p9_*\nPROFILE_MAX=200\n"), std::string::npos) << *text;
    job.profile_globs = {"v9fs_* reboot"};
    EXPECT_FALSE(job_file(job));
}

TEST(Job, ModuleTravelsInTheArchiveWithItsNameAndParameters) {
    TempDir dir;
    std::filesystem::path ko = dir.path() / "bh_lookup.ko";
    std::ofstream(ko) << "ELF";
    Job job = sample_job();
    job.module = ko;
    job.module_params = {{"loops", "200000"}, {"device", "/dev/rig-scratch"}};
    auto text = job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nMODULE=/etc/rig/workload.ko\nMODULE_NAME=bh_lookup\n"
                         "MODULE_PARAMS=loops=200000 device=/dev/rig-scratch\n"),
              std::string::npos)
        << *text;
    auto archive = job_archive(job);
    ASSERT_TRUE(archive) << archive.error().message;
    EXPECT_EQ(run_cpio(*archive, {"-i", "--to-stdout", "etc/rig/workload.ko"}), "ELF");
    // A parameter is one insmod argument: a space would make two.
    job.module_params = {{"loops", "1 2"}};
    EXPECT_FALSE(job_file(job));
}
