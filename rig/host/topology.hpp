// SPDX-License-Identifier: MIT
// The local host's CPUs as /sys places them, limited to those rig may run on.
#pragma once

#include "core/cpu_set.hpp"

#include <filesystem>
#include <vector>

namespace rig::host {

// The online CPUs in rig's own affinity mask (taskset, a cgroup's cpuset or a Slurm
// allocation narrow it), each with its core, package and NUMA node from `sys`
// (/sys/devices/system in production, a copy in tests). A CPU whose topology files are
// missing counts as a core of its own on node 0.
std::vector<core::HostCpu> local_cpus(const std::filesystem::path& sys = "/sys/devices/system");

// The same from `sys` alone, for the CPUs in `allowed`: what local_cpus reads once it knows
// rig's mask.
std::vector<core::HostCpu> cpus_from_sysfs(const std::filesystem::path& sys,
                                           const core::CpuSet& allowed);

} // namespace rig::host
