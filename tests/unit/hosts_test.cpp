// SPDX-License-Identifier: MIT
// Tests of run/hosts: one job per host at a time, and jobs of a lost host move on.
#include "run/hosts.hpp"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
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
