// SPDX-License-Identifier: MIT
// The host pool: a queue of jobs and one worker thread per host.
#include "run/hosts.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace rig::run {

std::vector<size_t>
run_on_hosts(size_t count, size_t hosts,
             const std::function<JobResult(size_t job, size_t host)>& run,
             const std::function<void(size_t host, const std::string&)>& on_lost,
             const std::function<bool()>& stop) {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<size_t> queue;
    for (size_t job = 0; job < count; ++job)
        queue.push_back(job);
    size_t in_flight = 0;

    auto worker = [&](size_t host) {
        std::unique_lock lock(mutex);
        while (true) {
            // An idle host waits while another runs the last jobs: if that host drops
            // out, its job comes back here.
            changed.wait(lock, [&] { return !queue.empty() || in_flight == 0 || stop(); });
            if (queue.empty() || stop())
                break;
            size_t job = queue.front();
            queue.pop_front();
            ++in_flight;
            lock.unlock();
            JobResult result = run(job, host);
            if (result.end == JobEnd::host_lost)
                on_lost(host, result.reason);
            lock.lock();
            --in_flight;
            if (result.end == JobEnd::host_lost)
                queue.push_front(job);
            changed.notify_all();
            if (result.end == JobEnd::host_lost)
                break;
        }
        changed.notify_all();
    };

    std::vector<std::thread> threads;
    for (size_t host = 0; host < hosts; ++host)
        threads.emplace_back(worker, host);
    for (std::thread& thread : threads)
        thread.join();
    return {queue.begin(), queue.end()};
}

} // namespace rig::run
