// SPDX-License-Identifier: MIT
// Parsing of human units in scenario files: durations ("90s", "2m", "1h30m") and sizes ("1G").
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rig::util {

// Accepts a bare number of seconds or a sequence of NUMBER{ms,s,m,h}.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
std::string format_duration(std::chrono::milliseconds duration);

// Accepts bytes or NUMBER{K,M,G,T} (binary multiples, optional "i"/"B").
std::optional<uint64_t> parse_size(std::string_view text);

} // namespace rig::util
