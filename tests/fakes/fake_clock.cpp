// SPDX-License-Identifier: MIT
// The fake clock.
#include "fake_clock.hpp"

namespace rig::test {

std::chrono::steady_clock::time_point FakeClock::now() {
    std::lock_guard lock(m_mutex);
    // An hour in, as a machine's monotonic clock would be: nothing can be before zero.
    return std::chrono::steady_clock::time_point(std::chrono::hours(1) + m_elapsed);
}

std::chrono::system_clock::time_point FakeClock::wall_now() {
    std::lock_guard lock(m_mutex);
    return std::chrono::system_clock::time_point(k_wall_start + m_elapsed);
}

void FakeClock::sleep_for(std::chrono::milliseconds duration) {
    std::lock_guard lock(m_mutex);
    m_elapsed += duration;
    m_slept += duration;
    ++m_sleeps;
}

void FakeClock::advance(std::chrono::milliseconds duration) {
    std::lock_guard lock(m_mutex);
    m_elapsed += duration;
}

std::chrono::milliseconds FakeClock::elapsed() const {
    std::lock_guard lock(m_mutex);
    return m_elapsed;
}

std::chrono::milliseconds FakeClock::slept() const {
    std::lock_guard lock(m_mutex);
    return m_slept;
}

int FakeClock::sleeps() const {
    std::lock_guard lock(m_mutex);
    return m_sleeps;
}

} // namespace rig::test
