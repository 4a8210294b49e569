// SPDX-License-Identifier: MIT
// The slot pool: a queue of jobs and one worker thread per slot.
#include "run/hosts.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace rig::run {

size_t next_job(const std::deque<size_t>& queue, size_t slot,
                const std::map<std::pair<size_t, size_t>, int>& used,
                const std::function<size_t(size_t job)>& group, size_t window) {
    if (!group)
        return 0;
    size_t best = 0;
    int fewest = -1;
    for (size_t i = 0; i < std::min(std::max<size_t>(window, 1), queue.size()); ++i) {
        auto found = used.find({group(queue[i]), slot});
        int runs = found == used.end() ? 0 : found->second;
        if (fewest < 0 || runs < fewest) {
            best = i;
            fewest = runs;
        }
    }
    return best;
}

std::vector<size_t>
run_on_slots(size_t count, const Slots& slots,
             const std::function<JobResult(size_t job, size_t slot)>& run,
             const std::function<void(size_t host, const std::string&)>& on_lost,
             const std::function<bool()>& stop) {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<size_t> queue;
    for (size_t job = 0; job < count; ++job)
        queue.push_back(job);
    size_t in_flight = 0;
    std::map<size_t, bool> lost; // by host
    std::map<std::pair<size_t, size_t>, int> used;
    auto group_of = [&](size_t job) { return slots.group ? slots.group(job) : 0; };

    auto worker = [&](size_t slot) {
        size_t host = slots.host_of[slot];
        std::unique_lock lock(mutex);
        while (true) {
            // An idle slot waits while others run the last jobs: if their host drops
            // out, their jobs come back here.
            changed.wait(lock,
                         [&] { return !queue.empty() || in_flight == 0 || stop() || lost[host]; });
            if (queue.empty() || stop() || lost[host])
                break;
            size_t position = next_job(queue, slot, used, slots.group, slots.window);
            size_t job = queue[position];
            queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(position));
            ++used[{group_of(job), slot}];
            ++in_flight;
            lock.unlock();
            JobResult result = run(job, slot);
            bool first_loss = false;
            lock.lock();
            --in_flight;
            if (result.end == JobEnd::host_lost) {
                first_loss = !lost[host];
                lost[host] = true;
                --used[{group_of(job), slot}];
                queue.push_front(job);
            }
            changed.notify_all();
            if (result.end == JobEnd::host_lost) {
                if (first_loss) {
                    lock.unlock();
                    on_lost(host, result.reason);
                    lock.lock();
                }
                break;
            }
        }
        changed.notify_all();
    };

    std::vector<std::thread> threads;
    for (size_t slot = 0; slot < slots.host_of.size(); ++slot)
        threads.emplace_back(worker, slot);
    for (std::thread& thread : threads)
        thread.join();
    return {queue.begin(), queue.end()};
}

std::vector<size_t>
run_on_hosts(size_t count, size_t hosts,
             const std::function<JobResult(size_t job, size_t host)>& run,
             const std::function<void(size_t host, const std::string&)>& on_lost,
             const std::function<bool()>& stop) {
    Slots slots;
    for (size_t host = 0; host < hosts; ++host)
        slots.host_of.push_back(host);
    return run_on_slots(count, slots, run, on_lost, stop);
}

} // namespace rig::run
