// SPDX-License-Identifier: MIT
// Tests of vm/protocol_trace: 9p requests counted per share and window from QEMU's trace
// log, in the format QEMU 7.2's "log" backend writes.
#include "vm/protocol_trace.hpp"
#include "vm/qemu.hpp"
#include "vm/virtiofsd_log.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using namespace rig::vm;

namespace {

// Three shares on three queues: the guest root, the work share and the marking share,
// each mounted (version, attach with its aname) before the first mark.
const std::string k_mounts = R"(virtqueue_pop vq 0x7f01 elem 0x5501 in_num 1 out_num 1
v9fs_version tag 65535 id 100 msize 512000 version 9P2000.L
virtqueue_fill vq 0x7f01 elem 0x5501 len 19 idx 0
virtqueue_pop vq 0x7f01 elem 0x5502 in_num 1 out_num 1
v9fs_attach tag 0 id 104 fid 0 afid -1 uname nobody aname hostroot
virtqueue_pop vq 0x7f03 elem 0x5503 in_num 1 out_num 1
v9fs_attach tag 0 id 104 fid 0 afid -1 uname nobody aname rigmark
virtqueue_pop vq 0x7f02 elem 0x5504 in_num 1 out_num 1
v9fs_attach tag 0 id 104 fid 0 afid -1 uname nobody aname work
)";

std::string mark() {
    return "virtqueue_pop vq 0x7f03 elem 0x5590 in_num 1 out_num 1\n"
           "v9fs_walk tag 0 id 110 fid 0 newfid 1 nwnames 1\n"
           "v9fs_rerror tag 0 id 110 err 2\n";
}

} // namespace

TEST(ProtocolTrace, RequestsCountedPerShareAndType) {
    std::string log = k_mounts + mark() +
                      "virtqueue_pop vq 0x7f02 elem 0x5505 in_num 1 out_num 1\n"
                      "v9fs_walk tag 0 id 110 fid 1 newfid 2 nwnames 1\n"
                      "v9fs_walk_return tag 0 id 110 nwnames 1 qids 0x55a8ef5ad470\n"
                      "virtqueue_pop vq 0x7f02 elem 0x5506 in_num 1 out_num 1\n"
                      "v9fs_getattr tag 0 id 24 fid 2 request_mask 6143\n"
                      "virtqueue_pop vq 0x7f01 elem 0x5507 in_num 1 out_num 1\n"
                      "v9fs_getattr tag 0 id 24 fid 2 request_mask 6143\n"
                      "v9fs_getattr_return tag 0 id 24 getattr={result_mask 2047 mode 16877}\n" +
                      mark();
    ProtocolCounts counts = count_protocol_trace(log, "rigmark");
    EXPECT_EQ(counts.marks, 2);
    EXPECT_EQ(counts.shares, (std::set<std::string>{"hostroot", "work"}));
    ASSERT_EQ(counts.windows.size(), 1u);
    const TraceWindow& window = counts.windows[0];
    EXPECT_EQ(window.at("work").requests, 2u);
    EXPECT_EQ(window.at("work").by_type.at("walk"), 1u);
    EXPECT_EQ(window.at("work").by_type.at("getattr"), 1u);
    EXPECT_EQ(window.at("hostroot").requests, 1u);
    EXPECT_EQ(window.count("rigmark"), 0u) << "marks are not requests of a window";
}

TEST(ProtocolTrace, NothingCountedBeforeTheFirstMarkOrAfterTheLast) {
    std::string request = "virtqueue_pop vq 0x7f02 elem 0x5505 in_num 1 out_num 1\n"
                          "v9fs_clunk tag 0 id 120 fid 2\n";
    ProtocolCounts counts = count_protocol_trace(
        k_mounts + request + mark() + request + mark() + request + request, "rigmark");
    ASSERT_EQ(counts.windows.size(), 1u);
    EXPECT_EQ(counts.windows[0].at("work").requests, 1u);
}

TEST(ProtocolTrace, WindowsBetweenConsecutiveMarks) {
    std::string walk = "virtqueue_pop vq 0x7f02 elem 0x5505 in_num 1 out_num 1\n"
                       "v9fs_walk tag 0 id 110 fid 1 newfid 2 nwnames 1\n";
    ProtocolCounts counts = count_protocol_trace(
        k_mounts + mark() + walk + walk + mark() + mark() + walk + mark(), "rigmark");
    EXPECT_EQ(counts.marks, 4);
    ASSERT_EQ(counts.windows.size(), 3u);
    EXPECT_EQ(counts.windows[0].at("work").requests, 2u);
    EXPECT_EQ(counts.windows[1].count("work"), 0u) << "an empty window has no entries";
    EXPECT_EQ(counts.windows[2].at("work").requests, 1u);
}

TEST(ProtocolTrace, UntracedRequestTypesCountAsOther) {
    // QEMU 7.2 has no trace event for statfs or unlinkat: a pop with no request after it.
    std::string log = k_mounts + mark() +
                      "virtqueue_pop vq 0x7f02 elem 0x5505 in_num 1 out_num 1\n"
                      "virtqueue_pop vq 0x7f02 elem 0x5506 in_num 1 out_num 1\n"
                      "v9fs_open tag 0 id 12 fid 2 mode 0\n"
                      "virtqueue_pop vq 0x7f02 elem 0x5507 in_num 1 out_num 1\n" +
                      mark();
    ProtocolCounts counts = count_protocol_trace(log, "rigmark");
    ASSERT_EQ(counts.windows.size(), 1u);
    const ShareCounts& work = counts.windows[0].at("work");
    EXPECT_EQ(work.requests, 3u);
    EXPECT_EQ(work.by_type.at("other"), 2u);
    EXPECT_EQ(work.by_type.at("lopen"), 1u) << "named by its message type, 12";
}

TEST(ProtocolTrace, ReadBytesFromTheReplyAndWriteBytesFromTheRequest) {
    // An Rread is 11 bytes of header and its data; its fill may come after other pops.
    std::string log = k_mounts + mark() +
                      "virtqueue_pop vq 0x7f02 elem 0x5505 in_num 1 out_num 1\n"
                      "v9fs_read tag 0 id 116 fid 2 off 0 max_count 8192\n"
                      "virtqueue_pop vq 0x7f02 elem 0x5506 in_num 1 out_num 2\n"
                      "v9fs_write tag 1 id 118 fid 3 off 0 count 300 cnt 2\n"
                      "virtqueue_fill vq 0x7f02 elem 0x5506 len 11 idx 1\n"
                      "virtqueue_fill vq 0x7f02 elem 0x5505 len 4107 idx 0\n" +
                      mark();
    ProtocolCounts counts = count_protocol_trace(log, "rigmark");
    ASSERT_EQ(counts.windows.size(), 1u);
    const ShareCounts& work = counts.windows[0].at("work");
    EXPECT_EQ(work.read_bytes, 4096u);
    EXPECT_EQ(work.write_bytes, 300u);
    EXPECT_EQ(work.by_type.at("read"), 1u);
    EXPECT_EQ(work.by_type.at("write"), 1u);
}

TEST(ProtocolTrace, TimestampPrefixAndStrayLinesAreHandled) {
    // libvirt passes -msg timestamp=on: "PID@SECONDS.MICROS:" before each event.
    std::string log = k_mounts + mark() +
                      "1234@1700000000.000001:virtqueue_pop vq 0x7f02 elem 0x5505 in_num 1 "
                      "out_num 1\n"
                      "qemu-system-x86_64: warning: something unrelated\n"
                      "1234@1700000000.000002:v9fs_readdir tag 0 id 40 fid 2 offset 0 "
                      "max_count 8168\n" +
                      mark();
    ProtocolCounts counts = count_protocol_trace(log, "rigmark");
    ASSERT_EQ(counts.windows.size(), 1u);
    EXPECT_EQ(counts.windows[0].at("work").by_type.at("readdir"), 1u);
}

TEST(ProtocolTrace, TypeNames) {
    EXPECT_EQ(ninep_type_name(110), "walk");
    EXPECT_EQ(ninep_type_name(24), "getattr");
    EXPECT_EQ(ninep_type_name(12), "lopen");
    EXPECT_EQ(ninep_type_name(30), "xattrwalk");
    EXPECT_EQ(ninep_type_name(99), "type-99");
}

TEST(ProtocolTrace, OptionsAndEventsFile) {
    auto options = protocol_trace_options("/out/a,b/9p.trace");
    EXPECT_EQ(options, (std::vector<std::string>{"-trace", "events=/out/a,,b/9p.trace.events", "-D",
                                                 "/out/a,b/9p.trace"}));
    std::string events = protocol_trace_events();
    EXPECT_NE(events.find("virtqueue_pop\n"), std::string::npos);
    EXPECT_NE(events.find("v9fs_walk\n"), std::string::npos);
    EXPECT_EQ(events.find("_return"), std::string::npos) << "each request counted once";
}

TEST(VirtiofsdLog, RequestsCountedBetweenMarksWithoutTheMarksOwnLookups) {
    auto request = [](int unique, const std::string& opcode) {
        return "[2026-12-01 00:04:17.1+0000] [ID: 00000004] unique: " + std::to_string(unique) +
               ", opcode: " + opcode + ", nodeid: 1, insize: 56, pid: 143\n";
    };
    auto mark = [&](int n) {
        return request(100 + n, "LOOKUP (1)") +
               "[2026-12-01 00:04:17.2+0000] [ID: 00000004] lo_lookup(parent=1, name=.rig-mark-" +
               std::to_string(n) + ")\n";
    };
    std::string log =
        request(2, "INIT (26)") + mark(1) + request(4, "GETATTR (3)") + request(6, "LOOKUP (1)") +
        "[2026-12-01 00:04:17.3+0000] [ID: 00000004] lo_lookup(parent=1, "
        "name=unit_0.d)\n" +
        "[2026-12-01 00:04:17.3+0000] [ID: 00000001] virtio_loop: Got VU event\n" + mark(2) +
        request(8, "READDIRPLUS (44)") + mark(3) + request(9, "DESTROY (38)");
    ProtocolCounts counts = count_virtiofsd_log(log, "work");
    EXPECT_EQ(counts.marks, 3);
    EXPECT_EQ(counts.shares, std::set<std::string>{"work"});
    ASSERT_EQ(counts.windows.size(), 2u);
    const ShareCounts& first = counts.windows[0].at("work");
    EXPECT_EQ(first.requests, 2u);
    EXPECT_EQ(first.by_type.at("getattr"), 1u);
    EXPECT_EQ(first.by_type.at("lookup"), 1u) << "the mark's own lookup is not the workload's";
    EXPECT_EQ(counts.windows[1].at("work").by_type.at("readdirplus"), 1u);
    EXPECT_EQ(counts.windows[1].at("work").requests, 1u);
}

TEST(VirtiofsdLog, RequestNamesAreFusesOpcodes) {
    auto names = fuse_request_names();
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    for (const char* name : {"lookup", "getattr", "readdirplus", "batch_forget", "syncfs"})
        EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

// A share's name becomes part of metric names, and the guest chooses its aname: one that is
// not a plain word names no share.
TEST(ProtocolTrace, AnAnameThatIsNotAPlainWordNamesNoShare) {
    std::string log = k_mounts +
                      "virtqueue_pop vq 0x7f04 elem 0x5510 in_num 1 out_num 1\n"
                      "v9fs_attach tag 0 id 104 fid 0 afid -1 uname nobody aname a\x01<b>\n" +
                      mark() +
                      "virtqueue_pop vq 0x7f04 elem 0x5511 in_num 1 out_num 1\n"
                      "v9fs_clunk tag 0 id 120 fid 2\n" +
                      mark();
    ProtocolCounts counts = count_protocol_trace(log, "rigmark");
    EXPECT_EQ(counts.shares, (std::set<std::string>{"hostroot", "work"}));
    ASSERT_EQ(counts.windows.size(), 1u);
    EXPECT_TRUE(counts.windows[0].empty());
}

// virtiofsd prints "???" for an opcode it has no name for, which the guest can send: it
// counts as "other", so metric names come from FUSE's list only. A window whose mark took
// back its only lookup keeps no "lookup 0".
TEST(VirtiofsdLog, UnnamedOpcodesCountAsOtherAndNoTypeIsLeftAtZero) {
    auto request = [](int unique, const std::string& opcode) {
        return "[ID: 00000004] unique: " + std::to_string(unique) + ", opcode: " + opcode +
               ", nodeid: 1, insize: 56, pid: 143\n";
    };
    auto mark = [&](int n) {
        return request(100 + n, "LOOKUP (1)") +
               "[ID: 00000004] lo_lookup(parent=1, name=.rig-mark-" + std::to_string(n) + ")\n";
    };
    std::string log = mark(1) + request(4, "??? (4242)") + request(5, "Lookup\x01 (1)") + mark(2) +
                      request(6, "GETATTR (3)") + mark(3);
    ProtocolCounts counts = count_virtiofsd_log(log, "work");
    ASSERT_EQ(counts.windows.size(), 2u);
    const ShareCounts& first = counts.windows[0].at("work");
    EXPECT_EQ(first.requests, 2u);
    EXPECT_EQ(first.by_type, (std::map<std::string, uint64_t>{{"other", 2}}));
    const ShareCounts& second = counts.windows[1].at("work");
    EXPECT_EQ(second.by_type, (std::map<std::string, uint64_t>{{"getattr", 1}}));
    auto names = fuse_request_names();
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "other"));
}
