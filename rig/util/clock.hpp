// SPDX-License-Identifier: MIT
// Time as the loops that wait read it: a monotonic clock for intervals and deadlines, the
// wall clock for what is stored, and sleeping. A seam: the run loop, the batch coordinator,
// the progress line and the bisect are handed one, and unit tests hand in a fake whose
// sleeps advance its time at once.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace rig::util {

class Clock {
public:
    virtual ~Clock() = default;
    // Monotonic: for elapsed times, intervals and deadlines.
    virtual std::chrono::steady_clock::time_point now() = 0;
    // The wall clock: for times stored or shown as dates.
    virtual std::chrono::system_clock::time_point wall_now() = 0;
    virtual void sleep_for(std::chrono::milliseconds duration) = 0;
};

// The machine's clocks and std::this_thread::sleep_for. Safe from any thread.
Clock& real_clock();

// "2024-05-01T12:00:00Z": a wall time in UTC as the database stores it.
std::string utc_text(std::chrono::system_clock::time_point time);

// A line of a log (stdout that is not a terminal): `clock`'s wall time in UTC, a space,
// `text`. The watcher's, the progress's and the kernel builds' lines all look so.
std::string log_line(Clock& clock, std::string_view text);

} // namespace rig::util
