// SPDX-License-Identifier: MIT
// Tests of core/cpu_set: the list format, and CPU sets chosen from a host's topology.
#include "core/cpu_set.hpp"

#include <gtest/gtest.h>
#include <set>

using namespace rig;
using core::CpuSet;
using core::HostCpu;

namespace {

// `cores` cores of `threads` hyperthreads on each of `nodes` nodes, numbered as Linux does
// on x86: first every core's first thread, then the siblings.
std::vector<HostCpu> host(int nodes, int cores, int threads) {
    std::vector<HostCpu> cpus;
    int per_thread = nodes * cores;
    for (int thread = 0; thread < threads; ++thread)
        for (int node = 0; node < nodes; ++node)
            for (int core = 0; core < cores; ++core)
                cpus.push_back({thread * per_thread + node * cores + core, core, node, node});
    return cpus;
}

} // namespace

TEST(CpuList, FormatsRangesAndSingles) {
    EXPECT_EQ(core::cpu_list_text({}), "");
    EXPECT_EQ(core::cpu_list_text({3}), "3");
    EXPECT_EQ(core::cpu_list_text({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
    EXPECT_EQ(core::cpu_sets_text({}), "");
    EXPECT_EQ(core::cpu_sets_text({{0, 1}, {2, 3}, {5}}), "0-1 | 2-3 | 5");
}

TEST(CpuList, ParsesWhatTheKernelPrints) {
    EXPECT_EQ(*core::parse_cpu_list("0-3,8,10-11\n"), (CpuSet{0, 1, 2, 3, 8, 10, 11}));
    EXPECT_EQ(*core::parse_cpu_list("5"), (CpuSet{5}));
    EXPECT_EQ(*core::parse_cpu_list(""), CpuSet{});
    EXPECT_FALSE(core::parse_cpu_list("3-1"));
    EXPECT_FALSE(core::parse_cpu_list("a"));
    EXPECT_FALSE(core::parse_cpu_list("1-"));
}

TEST(CpuSets, TwoCoresTakeTwoOneCpuGuestsAndNoReserve) {
    auto sets = core::choose_cpu_sets(host(1, 2, 1), 1, 2);
    ASSERT_TRUE(sets) << sets.error().message;
    EXPECT_EQ(*sets, (std::vector<CpuSet>{{0}, {1}}));
}

TEST(CpuSets, TooManyJobsSayWhatFits) {
    auto sets = core::choose_cpu_sets(host(1, 2, 1), 1, 3);
    ASSERT_FALSE(sets);
    EXPECT_EQ(sets.error().kind, ErrorKind::usage);
    EXPECT_NE(sets.error().message.find("at most 2 at once fit (--jobs 2)"), std::string::npos)
        << sets.error().message;
    EXPECT_NE(sets.error().message.find("CPUs (0-1)"), std::string::npos);
    auto big = core::choose_cpu_sets(host(1, 2, 1), 4, 1);
    ASSERT_FALSE(big);
    EXPECT_NE(big.error().message.find("lower guest.cpus"), std::string::npos);
}

TEST(CpuSets, HyperthreadSiblingsStayTogetherAndGuestsNeverShareACore) {
    // 4 cores x 2 threads: CPU n and n+4 are siblings.
    auto sets = core::choose_cpu_sets(host(1, 4, 2), 1, 4);
    ASSERT_TRUE(sets) << sets.error().message;
    EXPECT_EQ(*sets, (std::vector<CpuSet>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
    // Two vCPUs fit on one core's two threads.
    auto pairs = core::choose_cpu_sets(host(1, 4, 2), 2, 4);
    ASSERT_TRUE(pairs);
    EXPECT_EQ(pairs->front(), (CpuSet{0, 4}));
}

TEST(CpuSets, BigHostsKeepACoreForRigAndGuestsStayOnOneNode) {
    // 2 nodes x 8 cores: one core per eight is kept, the first ones.
    EXPECT_EQ(core::reserved_cores(16), 2u);
    auto sets = core::choose_cpu_sets(host(2, 8, 1), 4, 3);
    ASSERT_TRUE(sets) << sets.error().message;
    // Cores 0 and 1 (node 0) are kept; node 0 has 6 left: one guest of 4, then node 1.
    EXPECT_EQ((*sets)[0], (CpuSet{2, 3, 4, 5}));
    EXPECT_EQ((*sets)[1], (CpuSet{8, 9, 10, 11}));
    EXPECT_EQ((*sets)[2], (CpuSet{12, 13, 14, 15}));
    std::set<int> seen;
    for (const CpuSet& set : *sets)
        for (int cpu : set)
            EXPECT_TRUE(seen.insert(cpu).second) << "CPU " << cpu << " given twice";
    auto fits = core::choose_cpu_sets(host(2, 8, 1), 4, 4);
    ASSERT_FALSE(fits);
    EXPECT_NE(fits.error().message.find("at most 3 at once fit (--jobs 3)"), std::string::npos)
        << fits.error().message;
}
