// SPDX-License-Identifier: MIT
// Spreading samples over places that run them at once: several hosts, and under --jobs
// several CPU sets of one host (slots). A host that drops out hands its samples back to
// the others' slots.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rig::run {

enum class JobEnd { done, host_lost };

struct JobResult {
    JobEnd end = JobEnd::done;
    std::string reason; // why the host was lost
};

// Where jobs may run: each slot runs one job at a time, on its host.
struct Slots {
    std::vector<size_t> host_of; // slot -> host; several slots may share one
    // Jobs of one group (a cell's samples) are spread over the slots rather than bunched
    // on one, so that a slow CPU set cannot pass for a slow cell. Empty: queue order only.
    std::function<size_t(size_t job)> group;
    // How far past the queue's front a slot looks for a job of a group it has run least.
    size_t window = 1;
};

// Which queue entry `slot` takes: among the first `window`, the one whose group this slot
// has run least (`used`: runs per group and slot), the earliest on a tie.
size_t next_job(const std::deque<size_t>& queue, size_t slot,
                const std::map<std::pair<size_t, size_t>, int>& used,
                const std::function<size_t(size_t job)>& group, size_t window);

// Runs jobs 0..count-1 on one thread per slot, in queue order but for the spreading above.
// `run(job, slot)` returning host_lost puts the job back at the front of the queue; that
// slot's host takes no more jobs (its other slots finish what they run) and
// `on_lost(host, reason)` is called once. Hands out no new job once `stop()` is true.
// Returns the jobs that never finished: every host was lost, or the run stopped.
std::vector<size_t>
run_on_slots(size_t count, const Slots& slots,
             const std::function<JobResult(size_t job, size_t slot)>& run,
             const std::function<void(size_t host, const std::string&)>& on_lost,
             const std::function<bool()>& stop);

// The same with one slot per host, slot i on host i.
std::vector<size_t>
run_on_hosts(size_t count, size_t hosts,
             const std::function<JobResult(size_t job, size_t host)>& run,
             const std::function<void(size_t host, const std::string&)>& on_lost,
             const std::function<bool()>& stop);

} // namespace rig::run
