// SPDX-License-Identifier: MIT
// CPU time from /proc: what one process has used, and how busy the whole host has been.
#pragma once

#include "util/error.hpp"

#include <optional>
#include <vector>

namespace rig::proc {

// CPU seconds used so far by the process (all its threads, the exited ones too, not its
// reaped children), or nullopt when it does not exist. Read from its CPU clock to the
// nanosecond; from /proc/PID/stat, to one clock tick, where that clock cannot be read.
std::optional<double> cpu_seconds(int pid);

// The same for the process and all its live descendants: virtiofsd forks a sandboxed
// child that does the work.
std::optional<double> tree_cpu_seconds(int pid);

// Cumulative since boot, summed over all CPUs; subtract two samples to get a rate.
struct HostCpu {
    double busy_seconds = 0;  // neither idle nor waiting for I/O (steal counts as busy)
    double total_seconds = 0; // busy plus idle plus I/O wait
};

// The whole host, or only the CPUs in `cpus` (a guest's set under --jobs: the other guests'
// work is not this one's). nullopt when /proc/stat cannot be read or lacks one of them.
std::optional<HostCpu> host_cpu(const std::vector<int>& cpus = {});

// Moves every thread of `pid` onto `cpus`: for a process rig did not start itself.
Expected<void> pin_threads(int pid, const std::vector<int>& cpus);

} // namespace rig::proc
