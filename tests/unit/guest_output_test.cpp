// SPDX-License-Identifier: MIT
// Tests of run/guest_output: a guest's console and result channel read into a sample.
#include "run/guest_output.hpp"

#include <gtest/gtest.h>
#include <string>

using namespace rig;
using run::GuestOutput;

namespace {

// A sample's channel as the agent writes it (a 9p cell of Debian 6.1), cut short.
const std::string k_channel =
    "RIG hello 2 6.1.0-57-amd64 9b72f44af28d-0\n"
    "RIG boot 1556394473 timer_list\n"
    "RIG module 9p ok\n"
    // "work /newroot/run/rig/work 9p rw,loose,msize=512000,trans=virtio 0 0\n"
    "RIG mounts "
    "d29yayAvbmV3cm9vdC9ydW4vcmlnL3dvcmsgOXAgcncsbG9vc2UsbXNpemU9NTEyMDAwLHRyYW5zPXZpcnRpbyAwIDAK\n"
    "RIG start 2000000000\n"
    "RIG end 4500000000 0\n"
    "RIG output 100\n"
    "RIG metric guest.cpu.user 1.25 s\n"
    // "a.c:1:1: warning: unused\n"
    "RIG tail YS5jOjE6MTogd2FybmluZzogdW51c2VkCg==\n"
    "RIG done\n";

const std::string k_console = "<6>[    1.0] 9pnet: Installing 9P2000 support\n"
                              "<3>[    2.0] 9pnet: p9_client_rpc: error -512\n"
                              "rig-init: a line without a level\n";

} // namespace

TEST(GuestOutput, ASampleFromBothStreams) {
    GuestOutput output;
    output.add_console(k_console);
    output.add_channel(k_channel);
    core::SampleFacts facts;
    core::Sample sample;
    output.describe(*core::find_fs("9p"), facts, sample);

    EXPECT_TRUE(facts.hello);
    EXPECT_TRUE(facts.ended);
    EXPECT_FALSE(facts.setup_failed);
    EXPECT_FALSE(facts.panic_on_console);
    EXPECT_EQ(facts.workload_exit, 0);
    EXPECT_EQ(facts.error_lines, 1);
    EXPECT_EQ(core::classify(facts), core::Outcome::errors);
    EXPECT_DOUBLE_EQ(sample.guest_seconds, 2.5);
    EXPECT_EQ(sample.exit_status, 0);
    // The console's error line first, then the workload's warning.
    ASSERT_EQ(sample.lines.size(), 2u);
    EXPECT_EQ(sample.lines[0].source, "console");
    EXPECT_EQ(sample.lines[0].line, "[    2.0] 9pnet: p9_client_rpc: error -512");
    EXPECT_EQ(sample.lines[1].source, "workload");
    EXPECT_EQ(sample.warning_count, 1);
    ASSERT_EQ(sample.metrics.size(), 1u);
    EXPECT_EQ(sample.metrics[0].name, "guest.cpu.user");
    EXPECT_EQ(sample.mount_negotiated, "9p rw,loose,msize=512000,trans=virtio");
    EXPECT_EQ(sample.msize_negotiated, 512000u);
    EXPECT_EQ(sample.cache_negotiated, "loose");
    EXPECT_EQ(output.channel_note(), "");
}

// run_sample takes a CPU mark at the start and at the end: each milestone is news once,
// in the chunk that completes its record.
TEST(GuestOutput, MilestonesAreNewsOnce) {
    GuestOutput output;
    auto news = output.add_channel("RIG hello 2 6.1 x\nRIG start 1");
    EXPECT_FALSE(news.started);
    news = output.add_channel("0\nRIG end 20 0\nRIG done\n");
    EXPECT_TRUE(news.started);
    EXPECT_TRUE(news.ended);
    EXPECT_TRUE(news.done);
    news = output.add_channel("RIG start 30\nRIG end 40 0\nRIG end x y\nRIG done\n");
    EXPECT_FALSE(news.started || news.ended || news.done);
    EXPECT_EQ(output.report().start_ns, 30u);
    EXPECT_EQ(output.report().end_ns, 40u);
}

TEST(GuestOutput, PanicAndLinesSplitAcrossReads) {
    GuestOutput output;
    output.add_console("<0>[    2.0] Kernel pa");
    EXPECT_FALSE(output.panic_on_console());
    output.add_console("nic - not syncing: sysrq triggered crash\n");
    EXPECT_TRUE(output.panic_on_console());
    core::SampleFacts facts;
    core::Sample sample;
    output.describe(*core::find_fs("9p"), facts, sample);
    EXPECT_TRUE(facts.panic_on_console);
    EXPECT_EQ(core::classify(facts), core::Outcome::kernel_panic);
    ASSERT_EQ(sample.lines.size(), 1u);
    EXPECT_EQ(sample.lines[0].line, "[    2.0] Kernel panic - not syncing: sysrq triggered crash");
    EXPECT_EQ(output.console_tail(),
              "<0>[    2.0] Kernel panic - not syncing: sysrq triggered crash\n");
}

// panic_print=0x20: after the panic the console replays the whole log from 0.000000. What
// was printed live is not counted twice; what follows the replay counts as usual.
TEST(GuestOutput, APanicsReplayOfTheLogIsNotCountedAgain) {
    const std::string live = "<4>[    0.700000] 9pnet: -- a warning --\n"
                             "<0>[    1.639580] Kernel panic - not syncing: sysrq triggered crash\n"
                             "<4>[    1.641315] Call Trace:\n";
    GuestOutput output;
    output.add_console(live);
    output.add_console("<5>[    0.000000] Linux version 6.1.0-57-amd64\n"
                       "<6>[    0.500000] 9pnet: Installing 9P2000 support\n" +
                       live + "<0>[    1.700000] ---[ end Kernel panic - not syncing ]---\n");
    core::SampleFacts facts;
    core::Sample sample;
    output.describe(*core::find_fs("9p"), facts, sample);
    EXPECT_TRUE(facts.panic_on_console);
    EXPECT_EQ(sample.error_count, 2);   // the panic, and the end of it
    EXPECT_EQ(sample.warning_count, 2); // the 9pnet warning and the call trace, once each
    ASSERT_EQ(sample.lines.size(), 4u);
    EXPECT_EQ(sample.lines[3].line, "[    1.700000] ---[ end Kernel panic - not syncing ]---");
}

TEST(GuestOutput, NoMountNoEndAndAChannelNote) {
    GuestOutput output;
    output.add_channel("noise\nRIG start x\nRIG hello 2 6.1 x\n");
    core::SampleFacts facts;
    core::Sample sample;
    output.describe(*core::find_fs("virtiofs"), facts, sample);
    EXPECT_TRUE(facts.hello);
    EXPECT_FALSE(facts.ended);
    EXPECT_EQ(facts.workload_exit, -1);
    EXPECT_EQ(sample.mount_negotiated, "");
    EXPECT_FALSE(sample.msize_negotiated);
    EXPECT_EQ(output.channel_note(), "result channel: 1 junk lines, 1 malformed records\n");
}

TEST(GuestOutput, AModulesKernelLogCountsItsErrorLevelLines) {
    // "<6>bench: start\n<3>bench: lost block 7\n"
    const std::string channel =
        "RIG hello 2 6.1.0-57-amd64 abc-0\nRIG start 1\nRIG end 2 0\n"
        "RIG tail PDY+YmVuY2g6IHN0YXJ0CjwzPmJlbmNoOiBsb3N0IGJsb2NrIDcK\nRIG done\n";
    for (auto kind : {run::WorkloadOutput::text, run::WorkloadOutput::kernel_log}) {
        GuestOutput output(kind);
        output.add_channel(channel);
        core::SampleFacts facts;
        core::Sample sample;
        output.describe(*core::find_fs("9p"), facts, sample);
        if (kind == run::WorkloadOutput::text) {
            EXPECT_EQ(sample.error_count, 0) << "a program's text has no levels to go by";
            continue;
        }
        EXPECT_EQ(sample.error_count, 1);
        ASSERT_EQ(sample.lines.size(), 1u);
        EXPECT_EQ(sample.lines[0].source, "module");
        EXPECT_EQ(sample.lines[0].line, "bench: lost block 7");
    }
}
