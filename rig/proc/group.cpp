// SPDX-License-Identifier: MIT
// Supervising a child's process group with raw waitid and kill.
#include "proc/group.hpp"

#include "proc/spawn.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <sys/wait.h>
#include <thread>

namespace rig::proc {

namespace {

using namespace std::chrono_literals;

constexpr auto k_max_backoff = 20ms;

} // namespace

Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
    auto now = Clock::now();
    auto room =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now);
    return timeout >= room ? Clock::time_point::max() : now + timeout;
}

int shell_status(int wait_status) {
    if (wait_status == k_lost_status)
        return -1;
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return -1;
}

bool Group::exited() {
    if (m_status)
        return true;
    siginfo_t info{};
    int rc;
    do
        rc = ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        m_status = k_lost_status;
        return true;
    }
    return info.si_pid != 0;
}

bool Group::wait_until(Clock::time_point deadline) {
    Clock::duration pause = 1ms;
    while (!exited()) {
        auto now = Clock::now();
        if (now >= deadline)
            return false;
        std::this_thread::sleep_for(std::min(pause, deadline - now));
        pause = std::min<Clock::duration>(pause * 2, k_max_backoff);
    }
    return true;
}

void Group::signal(int number) {
    if (m_status)
        return;
    ::kill(-m_pid, number);
    // The leader too, in case it moved itself to another group.
    ::kill(m_pid, number);
}

void Group::finish() {
    if (!m_status) {
        signal(SIGKILL);
        int status = 0;
        pid_t reaped;
        do
            reaped = ::waitpid(m_pid, &status, 0);
        while (reaped < 0 && errno == EINTR);
        m_status = reaped == m_pid ? status : k_lost_status;
    }
    reap_watcher(m_watcher);
}

} // namespace rig::proc
