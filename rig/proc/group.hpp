// SPDX-License-Identifier: MIT
// Supervising a started child and its process group: signals, waits and reaping.
#pragma once

#include "proc/spawn.hpp"

#include <chrono>
#include <optional>
#include <sys/types.h>

namespace rig::proc {

using Clock = std::chrono::steady_clock;

// A wait status that waitpid never produces: someone else reaped the child.
constexpr int k_lost_status = -1;

// Saturates, so that a caller's milliseconds::max() means "no deadline", not overflow.
Clock::time_point deadline_after(std::chrono::milliseconds timeout);

// Exit code, or 128 + signal as a shell would print it; -1 for k_lost_status.
int shell_status(int wait_status);

// A child and its process group. Signals go to the group only while the leader is not
// reaped: its zombie pins the group id, so the number cannot name a stranger's group.
class Group final {
public:
    explicit Group(Spawned spawned) : m_pid(spawned.leader), m_watcher(spawned.watcher) {}
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() { finish(); }

    pid_t pid() const { return m_pid; }
    const std::optional<int>& wait_status() const { return m_status; }

    // Whether the leader has exited; peeks (WNOWAIT) so that it is not reaped yet.
    bool exited();

    // Polls with backoff instead of blocking so the deadline holds; see process.hpp.
    bool wait_until(Clock::time_point deadline);

    // The watcher blocks every signal but SIGKILL, so it stays through a graceful stop.
    void signal(int number);

    // SIGKILLs what is left of the group, the leader and the watcher included, and reaps
    // both.
    void finish();

private:
    pid_t m_pid;
    Watcher m_watcher;
    std::optional<int> m_status; // raw wait status once reaped
};

} // namespace rig::proc
