// SPDX-License-Identifier: MIT
// Tests of host/topology: CPUs, cores and NUMA nodes read from a copy of /sys.
#include "host/topology.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <gtest/gtest.h>

using namespace rig;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
}

// CPU `id` as core `core` of package 0.
void add_cpu(const fs::path& sys, int id, int core) {
    fs::path topology = sys / "cpu" / ("cpu" + std::to_string(id)) / "topology";
    write(topology / "core_id", std::to_string(core));
    write(topology / "physical_package_id", "0");
}

} // namespace

TEST(Topology, CoresAndNodesFromSysfsForTheAllowedOnlineCpus) {
    test::TempDir dir;
    fs::path sys = dir.path();
    // 4 CPUs: 0 and 2 are one core's threads, 1 and 3 another's; CPU 3 is offline.
    add_cpu(sys, 0, 0);
    add_cpu(sys, 1, 1);
    add_cpu(sys, 2, 0);
    add_cpu(sys, 3, 1);
    write(sys / "cpu" / "online", "0-2");
    write(sys / "node" / "node0" / "cpulist", "0,2");
    write(sys / "node" / "node1" / "cpulist", "1,3");
    auto cpus = host::cpus_from_sysfs(sys, {0, 1, 2, 3});
    ASSERT_EQ(cpus.size(), 3u);
    EXPECT_EQ(cpus[0].id, 0);
    EXPECT_EQ(cpus[0].core, 0);
    EXPECT_EQ(cpus[0].node, 0);
    EXPECT_EQ(cpus[1].id, 1);
    EXPECT_EQ(cpus[1].node, 1);
    EXPECT_EQ(cpus[2].id, 2);
    EXPECT_EQ(cpus[2].core, 0);
    // rig's mask narrows it further.
    EXPECT_EQ(host::cpus_from_sysfs(sys, {2}).size(), 1u);
}

TEST(Topology, ACpuWithoutTopologyFilesIsACoreOfItsOwn) {
    test::TempDir dir;
    auto cpus = host::cpus_from_sysfs(dir.path(), {0, 1});
    ASSERT_EQ(cpus.size(), 2u);
    EXPECT_NE(cpus[0].core, cpus[1].core);
    EXPECT_EQ(cpus[0].node, 0);
}

TEST(Topology, ThisHostHasTheCpusRigMayUse) {
    auto cpus = host::local_cpus();
    ASSERT_FALSE(cpus.empty());
    auto sets = core::choose_cpu_sets(cpus, 1, 1);
    EXPECT_TRUE(sets) << sets.error().message;
}
