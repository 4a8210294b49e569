// SPDX-License-Identifier: MIT
// Human units: durations ("90s", "2m", "1h30m") and sizes ("1G") parsed from scenario files,
// and durations printed.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rig::util {

// Accepts a bare number of seconds or a sequence of NUMBER{ms,s,m,h}.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// How a duration prints. Each style keeps the text of the place that prints it.
enum class DurationStyle {
    progress,      // "340ms", "1.5s", "2m 3s", "1h 2m": units cut, never rounded up
    report,        // "0.3s", "59.9s", "2m 3s", "1h 2m": tenths up to a minute, then rounded
    minutes_colon, // "0m05s", "12m30s": whole minutes and two-digit seconds, cut
};
std::string format_duration(std::chrono::milliseconds duration); // the progress style
std::string format_duration(double seconds, DurationStyle style);

// Accepts bytes or NUMBER{K,M,G,T} (binary multiples, optional "i"/"B").
std::optional<uint64_t> parse_size(std::string_view text);

} // namespace rig::util
