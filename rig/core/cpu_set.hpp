// SPDX-License-Identifier: MIT
// Host CPUs for parallel guests: each guest of `--jobs N` gets a set of its own, chosen
// from the host's topology, so that guests do not disturb each other's timings.
#pragma once

#include "util/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

// One logical CPU as the host's topology places it.
struct HostCpu {
    int id = 0;
    int core = 0;    // core_id: the hyperthreads of one core share it within a package
    int package = 0; // physical_package_id (socket)
    int node = 0;    // NUMA node
};

// Logical CPU numbers, ascending.
using CpuSet = std::vector<int>;

// The kernel's list format ("0-3,8,10-11"), as in /sys and Cpus_allowed_list.
std::string cpu_list_text(const CpuSet& cpus);
// Several sets as progress lines show them: "0-1 | 2-3".
std::string cpu_sets_text(const std::vector<CpuSet>& sets);
Expected<CpuSet> parse_cpu_list(std::string_view text);

// Cores (not CPUs) kept free for rig and the host: none on a small host, where every core
// is needed for a guest and rig mostly sleeps; one per eight cores above that.
size_t reserved_cores(size_t cores);

// `jobs` disjoint sets for guests of `guest_cpus` vCPUs each. A guest takes whole cores
// (hyperthread siblings stay together, so no two guests share a core's execution units)
// and stays on one NUMA node where one has room. The reserve is taken from the first
// cores, where the host's interrupts land. A usage error when they do not fit, saying
// what does: the number of guests that fits, or the guest size.
Expected<std::vector<CpuSet>> choose_cpu_sets(const std::vector<HostCpu>& cpus, int guest_cpus,
                                              int jobs);

} // namespace rig::core
