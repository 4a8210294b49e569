// SPDX-License-Identifier: MIT
// The real clock.
#include "util/clock.hpp"

#include <ctime>
#include <thread>

namespace rig::util {

namespace {

class RealClock final : public Clock {
public:
    std::chrono::steady_clock::time_point now() override {
        return std::chrono::steady_clock::now();
    }
    std::chrono::system_clock::time_point wall_now() override {
        return std::chrono::system_clock::now();
    }
    void sleep_for(std::chrono::milliseconds duration) override {
        std::this_thread::sleep_for(duration);
    }
};

} // namespace

Clock& real_clock() {
    static RealClock clock;
    return clock;
}

std::string utc_text(std::chrono::system_clock::time_point time) {
    std::time_t seconds = std::chrono::system_clock::to_time_t(time);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc); // samples of --jobs start from several threads
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

std::string log_line(Clock& clock, std::string_view text) {
    return utc_text(clock.wall_now()) + " " + std::string(text);
}

} // namespace rig::util
