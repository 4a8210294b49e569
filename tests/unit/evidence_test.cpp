// SPDX-License-Identifier: MIT
// Tests of core/evidence: which lines count, and signatures that survive a reboot.
#include "core/evidence.hpp"

#include <gtest/gtest.h>

using namespace rig::core;

TEST(Evidence, KernelLines) {
    EXPECT_EQ(classify_line("[   12.345678] Kernel panic - not syncing: sysrq triggered crash"),
              Severity::error);
    EXPECT_EQ(
        classify_line("[    3.1] BUG: kernel NULL pointer dereference, address: 0000000000000008"),
        Severity::error);
    EXPECT_EQ(
        classify_line("<4>[ 5.0] WARNING: CPU: 1 PID: 77 at fs/9p/vfs_file.c:400 v9fs_x+0x1/0x2"),
        Severity::warning);
    EXPECT_EQ(classify_line("[ 5.1] Call Trace:"), Severity::warning);
    EXPECT_EQ(classify_line("[ 5.0] ------------[ cut here ]------------"), std::nullopt);
}

TEST(Evidence, FilesystemAndIoLines) {
    EXPECT_EQ(classify_line("cc1: fatal error: foo.c: Bad file descriptor"), Severity::error);
    EXPECT_EQ(classify_line("cat: x: Input/output error"), Severity::error);
    // Without a printk level, subsystem lines count only when they report an error.
    EXPECT_EQ(classify_line("9pnet: Limiting 'msize' to 512000 as this is the maximum supported by "
                            "transport virtio"),
              std::nullopt);
    EXPECT_EQ(classify_line("9pnet_virtio: no channels available for device work"), std::nullopt);
    EXPECT_EQ(classify_line("virtio-fs: error 5 from request"), Severity::error);
}

TEST(Evidence, KernelLevels) {
    EXPECT_EQ(classify_kernel_line(6, "[ 3.9] 9pnet: Installing 9P2000 support"), std::nullopt);
    EXPECT_EQ(
        classify_kernel_line(4, "[ 1.1] mtrr: your CPUs had inconsistent variable MTRR settings"),
        std::nullopt);
    EXPECT_EQ(classify_kernel_line(4, "[ 5.0] netfs: Couldn't get user pages (rc=-14)"),
              Severity::warning);
    EXPECT_EQ(classify_kernel_line(3, "[ 5.0] 9pnet_virtio: no channels available for device work"),
              Severity::error);
    EXPECT_EQ(classify_kernel_line(3, "[ 5.0] blk_update_request: I/O error, dev vda"),
              Severity::error);
    // Firmware noise of emulated hardware is not a finding, whatever its level.
    EXPECT_EQ(
        classify_kernel_line(3, "[ 0.028] ..MP-BIOS bug: 8254 timer not connected to IO-APIC"),
        std::nullopt);
    EXPECT_EQ(classify_kernel_line(4, "[ 5.0] WARNING: CPU: 0 PID: 1 at fs/9p/x.c:1 f+0x1/0x2"),
              Severity::warning);
}

TEST(Evidence, PowerOffIsNotAnError) {
    EXPECT_EQ(classify_kernel_line(0, "[    2.696513] reboot: Power down"), std::nullopt);
    EXPECT_EQ(scan_console("<0>[    2.7] reboot: Power down\n").errors, 0);
}

TEST(Evidence, ConsoleWithPrintkLevels) {
    Scan scan =
        scan_console("<6>[    1.0] fuse: init (API version 7.38)\n"
                     "<4>[    1.1] mtrr: your CPUs had inconsistent variable MTRR settings\n"
                     "<0>[    2.0] Kernel panic - not syncing: sysrq triggered crash\n"
                     "<4>[    2.1] Call Trace:\n"
                     "plain: cc1: error: Bad file descriptor\n");
    EXPECT_EQ(scan.errors, 2);
    EXPECT_EQ(scan.warnings, 1);
    ASSERT_EQ(scan.lines.size(), 3u);
    EXPECT_EQ(scan.lines[0].source, "console");
    // The level prefix is not part of what is stored.
    EXPECT_EQ(scan.lines[0].line, "[    2.0] Kernel panic - not syncing: sysrq triggered crash");
    EXPECT_EQ(scan.lines[0].signature, "Kernel panic - not syncing: sysrq triggered crash");
}

TEST(Evidence, PrintkTimestamps) {
    EXPECT_EQ(printk_micros("<6>[    1.639013] sysrq: Trigger a crash"), 1639013u);
    EXPECT_EQ(printk_micros("[12345.000001] x"), 12345000001u);
    EXPECT_EQ(printk_micros("<5>[    0.000000] Linux version 6.1.0"), 0u);
    for (const char* line :
         {"", "no stamp", "<6>", "[    1.0] short", "[ 1.0000000] long", "[    .123456] no seconds",
          "[    1.123456 unclosed", "<6>[ x.123456]"})
        EXPECT_EQ(printk_micros(line), std::nullopt) << line;
}

// Found by the guest_output fuzzer: "<" and eleven digits overflowed the priority (UB),
// and a line whose "<...>" was no prefix was not classified at all.
TEST(Evidence, OnlyOneToThreeDigitsAreASyslogPrefix) {
    Scan scan = scan_console("<99999999999>[ 2.0] BUG: unable to handle page fault\n"
                             "<1234> BUG: soft lockup\n"
                             "<1a> Oops: 0002\n"
                             "<> Kernel panic - not syncing\n"
                             "<12>[ 3.0] netfs: Couldn't get user pages (rc=-14)\n"
                             "<3>\n");
    EXPECT_EQ(scan.errors, 4);
    EXPECT_EQ(scan.warnings, 1);
    ASSERT_EQ(scan.lines.size(), 5u);
    EXPECT_EQ(scan.lines[0].line, "<99999999999>[ 2.0] BUG: unable to handle page fault");
    EXPECT_EQ(scan.lines[3].line, "<> Kernel panic - not syncing");
    // A facility (userspace through /dev/kmsg) is cut off too: 12 is user.warning.
    EXPECT_EQ(scan.lines[4].line, "[ 3.0] netfs: Couldn't get user pages (rc=-14)");
    EXPECT_EQ(scan.lines[4].severity, Severity::warning);
}

TEST(Evidence, CompilerLines) {
    EXPECT_EQ(classify_line("unit7.c:12:5: error: expected ';' before '}' token"), Severity::error);
    EXPECT_EQ(classify_line("unit7.c:3:1: warning: unused variable 'x'"), Severity::warning);
    EXPECT_EQ(classify_line("make: *** [Makefile:9: unit7.o] Error 1"), Severity::error);
    EXPECT_EQ(classify_line("gcc -O2 -c unit7.c -o unit7.o"), std::nullopt);
}

TEST(Evidence, SignaturesStripVolatileParts) {
    EXPECT_EQ(signature_of("[   12.345678] WARNING: CPU: 1 PID: 4242 at fs/9p/vfs_file.c:400 "
                           "v9fs_x+0x1f/0x2a0"),
              signature_of("[    0.5] WARNING: CPU: 0 PID: 17 at fs/9p/vfs_file.c:400 "
                           "v9fs_x+0x44/0x2a0"));
    EXPECT_EQ(signature_of("[ 1.0] BUG: unable to handle page fault for address: ffff8880deadbeef"),
              "BUG: unable to handle page fault for address: ?");
    EXPECT_EQ(signature_of("unit12.c:40:7: error: 'x' undeclared"),
              "unitN.c:N:N: error: 'x' undeclared");
    // Words that merely contain hex letters survive.
    EXPECT_EQ(signature_of("Bad file descriptor"), "Bad file descriptor");
}

TEST(Evidence, ScanCountsBeyondTheLineLimit) {
    std::string text;
    for (int i = 0; i < 50; ++i)
        text += "u" + std::to_string(i) + ".c:1:1: error: boom\nplain line\n";
    Scan scan = scan_text(text, "workload", 10);
    EXPECT_EQ(scan.errors, 50);
    EXPECT_EQ(scan.warnings, 0);
    ASSERT_EQ(scan.lines.size(), 10u);
    EXPECT_EQ(scan.lines[0].source, "workload");
    EXPECT_EQ(scan.lines[0].signature, "uN.c:N:N: error: boom");
}

TEST(Evidence, MergeKeepsTheLimit) {
    Scan a = scan_text("x.c:1:1: error: a\n", "workload");
    merge_scan(a, scan_text("[1.0] WARNING: at y\n[1.1] WARNING: at z\n", "dmesg"), 2);
    EXPECT_EQ(a.errors, 1);
    EXPECT_EQ(a.warnings, 2);
    EXPECT_EQ(a.lines.size(), 2u);
}

TEST(ModuleOutput, ErrorAndWarningLevelsOfTheModuleCountAndTheConsolesOwnDoNotTwice) {
    auto scan = scan_module_output("rig-metric bh.lru_warm_ns 12.5 ns\n"
                                   "<6>bh_lookup: starting\n"
                                   "<4>bh_lookup: loading out-of-tree module taints kernel.\n"
                                   "<3>bh_lookup: cannot open /dev/rig-scratch: -2\n"
                                   "<4>bh_lookup: slow device\n"
                                   "<3>blk_update_request: I/O error, dev vda, sector 8\n"
                                   "no level at all\n");
    EXPECT_EQ(scan.errors, 1);
    EXPECT_EQ(scan.warnings, 1);
    ASSERT_EQ(scan.lines.size(), 2u);
    EXPECT_EQ(scan.lines[0].source, "module");
    EXPECT_EQ(scan.lines[0].line, "bh_lookup: cannot open /dev/rig-scratch: -2");
    EXPECT_EQ(scan.lines[0].signature, "bh_lookup: cannot open /dev/rig-scratch: -N");
}
