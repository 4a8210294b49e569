// SPDX-License-Identifier: MIT
// A Clock for unit tests: virtual time that stands still until the code under test sleeps
// (or the test advances it), and then moves on at once by exactly that much. A loop that
// polls every few seconds runs in microseconds, and what it computes from the time
// (elapsed, ETA, deadlines) is exact.
#pragma once

#include "util/clock.hpp"

#include <chrono>
#include <mutex>

namespace rig::test {

class FakeClock final : public util::Clock {
public:
    // The wall clock starts at k_wall_start.
    static constexpr std::chrono::seconds k_wall_start{1'700'000'000}; // 2023-11-14T22:13:20Z

    std::chrono::steady_clock::time_point now() override;
    std::chrono::system_clock::time_point wall_now() override;
    // Advances the time by `duration`, at once.
    void sleep_for(std::chrono::milliseconds duration) override;

    void advance(std::chrono::milliseconds duration);
    // Virtual time since the clock was made, and what sleeping took of it.
    std::chrono::milliseconds elapsed() const;
    std::chrono::milliseconds slept() const;
    int sleeps() const;

private:
    mutable std::mutex m_mutex;
    std::chrono::milliseconds m_elapsed{0};
    std::chrono::milliseconds m_slept{0};
    int m_sleeps = 0;
};

} // namespace rig::test
