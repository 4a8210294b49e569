// SPDX-License-Identifier: MIT
// Spreading samples over several hosts: one sample per host at a time, and a host that
// drops out hands its sample back to the others.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace rig::run {

enum class JobEnd { done, host_lost };

struct JobResult {
    JobEnd end = JobEnd::done;
    std::string reason; // why the host was lost
};

// Runs jobs 0..count-1 on `hosts` threads, each host one job at a time, in job order.
// `run(job, host)` returning host_lost puts the job back at the front of the queue for
// another host; that host takes no more jobs and `on_lost(host, reason)` is called.
// Hands out no new job once `stop()` is true. Returns the jobs that never finished:
// every host was lost, or the run stopped.
std::vector<size_t>
run_on_hosts(size_t count, size_t hosts,
             const std::function<JobResult(size_t job, size_t host)>& run,
             const std::function<void(size_t host, const std::string&)>& on_lost,
             const std::function<bool()>& stop);

} // namespace rig::run
