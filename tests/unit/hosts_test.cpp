// SPDX-License-Identifier: MIT
// Tests of run/hosts: one job per host at a time, and jobs of a lost host move on.
#include "run/hosts.hpp"

#include <atomic>
#include <chrono>
#include <deque>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace rig::run;

namespace {

auto never = [] { return false; };

} // namespace

TEST(Hosts, EveryJobRunsOnceAndHostsRunConcurrentlyOneJobEach) {
    std::mutex mutex;
    std::multiset<size_t> ran;
    std::atomic<int> busy[3] = {0, 0, 0};
    std::atomic<int> overlap_per_host{0}, running{0}, peak{0};
    auto run = [&](size_t job, size_t host) {
        if (++busy[host] > 1)
            ++overlap_per_host;
        int now = ++running;
        for (int seen = peak; now > seen && !peak.compare_exchange_weak(seen, now);)
            ;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        --running;
        --busy[host];
        std::lock_guard lock(mutex);
        ran.insert(job);
        return JobResult{};
    };
    auto left = run_on_hosts(
        12, 3, run, [](size_t, const std::string&) { FAIL(); }, never);
    EXPECT_TRUE(left.empty());
    EXPECT_EQ(ran.size(), 12u);
    EXPECT_EQ(std::set<size_t>(ran.begin(), ran.end()).size(), 12u);
    EXPECT_EQ(overlap_per_host, 0);
    EXPECT_GT(peak, 1); // hosts worked side by side
}

TEST(Hosts, ALostHostsJobRunsOnAnotherHostAndTheHostTakesNoMore) {
    std::mutex mutex;
    std::vector<std::pair<size_t, size_t>> done; // job, host
    std::vector<size_t> lost;
    auto run = [&](size_t job, size_t host) {
        // Host 1 drops out during its first job; host 0 is slow so that host 1 gets one.
        std::this_thread::sleep_for(std::chrono::milliseconds(host == 0 ? 30 : 5));
        if (host == 1)
            return JobResult{JobEnd::host_lost, "daemon gone"};
        std::lock_guard lock(mutex);
        done.emplace_back(job, host);
        return JobResult{};
    };
    auto on_lost = [&](size_t host, const std::string& why) {
        EXPECT_EQ(why, "daemon gone");
        std::lock_guard lock(mutex);
        lost.push_back(host);
    };
    auto left = run_on_hosts(5, 2, run, on_lost, never);
    EXPECT_TRUE(left.empty());
    EXPECT_EQ(lost, std::vector<size_t>{1});
    ASSERT_EQ(done.size(), 5u);
    std::set<size_t> jobs;
    for (auto [job, host] : done) {
        jobs.insert(job);
        EXPECT_EQ(host, 0u);
    }
    EXPECT_EQ(jobs.size(), 5u);
}

TEST(Hosts, TheLastJobWaitsForAnIdleHostWhenItsOwnDrops) {
    // One host finishes job 0 at once and would leave; the other then drops job 1.
    std::atomic<int> attempts{0};
    std::atomic<size_t> dropped_by{99}, finished_on{99};
    auto run = [&](size_t job, size_t host) {
        if (job == 1 && attempts++ == 0) {
            dropped_by = host;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            return JobResult{JobEnd::host_lost, "gone"};
        }
        if (job == 1)
            finished_on = host;
        return JobResult{};
    };
    auto left = run_on_hosts(
        2, 2, run, [](size_t, const std::string&) {}, never);
    EXPECT_TRUE(left.empty());
    EXPECT_NE(finished_on, 99u);
    EXPECT_NE(finished_on, dropped_by);
}

TEST(Hosts, WhenEveryHostIsLostTheJobsAreLeft) {
    auto run = [](size_t, size_t) { return JobResult{JobEnd::host_lost, "gone"}; };
    auto left = run_on_hosts(
        3, 2, run, [](size_t, const std::string&) {}, never);
    EXPECT_EQ(left.size(), 3u);
}

TEST(Hosts, StopHandsOutNoMoreJobs) {
    std::atomic<int> ran{0};
    std::atomic<bool> stop{false};
    auto run = [&](size_t, size_t) {
        ++ran;
        stop = true;
        return JobResult{};
    };
    auto left = run_on_hosts(
        4, 1, run, [](size_t, const std::string&) {}, [&] { return stop.load(); });
    EXPECT_EQ(ran, 1);
    EXPECT_EQ(left.size(), 3u);
}

TEST(Slots, ASlotTakesTheCellItHasRunLeastWithinTheWindow) {
    std::deque<size_t> queue{0, 1, 2, 3};
    auto group = [](size_t job) { return job % 2; }; // two cells, alternating
    std::map<std::pair<size_t, size_t>, int> used{{{0, 0}, 1}};
    // Slot 0 ran cell 0 before: it takes cell 1's job, the second in the queue.
    EXPECT_EQ(next_job(queue, 0, used, group, 2), 1u);
    // Slot 1 ran neither: the front.
    EXPECT_EQ(next_job(queue, 1, used, group, 2), 0u);
    // A window of one is queue order.
    EXPECT_EQ(next_job(queue, 0, used, group, 1), 0u);
    // Without groups, queue order.
    EXPECT_EQ(next_job(queue, 0, used, {}, 4), 0u);
}

TEST(Slots, ACellsSamplesGoRoundTheSlotsNotBunchedOnOne) {
    // Two cells x 4 repetitions in rounds, two slots of equal speed: plain queue order
    // would give each cell one slot for good.
    std::mutex mutex;
    std::map<size_t, std::set<size_t>> slots_of_cell;
    Slots slots;
    slots.host_of = {0, 0};
    slots.group = [](size_t job) { return job % 2; };
    slots.window = 2;
    auto run = [&](size_t job, size_t slot) {
        std::this_thread::sleep_for(std::chrono::milliseconds(job == 0 ? 5 : 20));
        std::lock_guard lock(mutex);
        slots_of_cell[job % 2].insert(slot);
        return JobResult{};
    };
    auto left = run_on_slots(
        8, slots, run, [](size_t, const std::string&) { FAIL(); }, never);
    EXPECT_TRUE(left.empty());
    EXPECT_EQ(slots_of_cell[0].size(), 2u);
    EXPECT_EQ(slots_of_cell[1].size(), 2u);
}

TEST(Slots, ALostHostStopsAllItsSlotsAndIsReportedOnce) {
    // Host 0 has two slots, host 1 one; host 0 drops out in its first jobs.
    std::mutex mutex;
    std::vector<size_t> lost;
    std::map<size_t, int> done_on_host;
    Slots slots;
    slots.host_of = {0, 0, 1};
    auto run = [&](size_t, size_t slot) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (slots.host_of[slot] == 0)
            return JobResult{JobEnd::host_lost, "gone"};
        std::lock_guard lock(mutex);
        ++done_on_host[slots.host_of[slot]];
        return JobResult{};
    };
    auto on_lost = [&](size_t host, const std::string&) {
        std::lock_guard lock(mutex);
        lost.push_back(host);
    };
    auto left = run_on_slots(6, slots, run, on_lost, never);
    EXPECT_TRUE(left.empty());
    EXPECT_EQ(lost, std::vector<size_t>{0});
    EXPECT_EQ(done_on_host[1], 6);
}
