// SPDX-License-Identifier: MIT
// Parsing of human units in scenario files.
#include "util/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace rig::util {

namespace {

// Reads the leading unsigned integer; nullopt on no digits or overflow.
std::optional<uint64_t> leading_number(std::string_view& text) {
    uint64_t value = 0;
    size_t i = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        uint64_t digit = static_cast<uint64_t>(text[i] - '0');
        if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
            return std::nullopt;
        value = value * 10 + digit;
    }
    if (i == 0)
        return std::nullopt;
    text.remove_prefix(i);
    return value;
}

std::optional<uint64_t> checked_multiply(uint64_t a, uint64_t b) {
    if (b != 0 && a > std::numeric_limits<uint64_t>::max() / b)
        return std::nullopt;
    return a * b;
}

} // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
    if (text.empty())
        return std::nullopt;
    uint64_t total_ms = 0;
    bool bare = true;
    while (!text.empty()) {
        auto number = leading_number(text);
        if (!number)
            return std::nullopt;
        uint64_t scale = 1000;
        if (text.substr(0, 2) == "ms") {
            scale = 1;
            text.remove_prefix(2);
        } else if (!text.empty() && (text[0] == 's' || text[0] == 'm' || text[0] == 'h')) {
            scale = text[0] == 's' ? 1000 : text[0] == 'm' ? 60'000 : 3'600'000;
            text.remove_prefix(1);
        } else if (!text.empty() || !bare) {
            return std::nullopt;
        }
        bare = false;
        auto part = checked_multiply(*number, scale);
        if (!part || total_ms + *part < total_ms)
            return std::nullopt;
        total_ms += *part;
    }
    if (total_ms > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return std::nullopt;
    return std::chrono::milliseconds(static_cast<int64_t>(total_ms));
}

std::string format_duration(std::chrono::milliseconds duration) {
    auto ms = duration.count();
    char buffer[64];
    if (ms < 1000)
        std::snprintf(buffer, sizeof buffer, "%lldms", static_cast<long long>(ms));
    else if (ms < 60'000)
        std::snprintf(buffer, sizeof buffer, "%.1fs", static_cast<double>(ms) / 1000.0);
    else if (ms < 3'600'000)
        std::snprintf(buffer, sizeof buffer, "%lldm %llds", static_cast<long long>(ms / 60'000),
                      static_cast<long long>(ms % 60'000 / 1000));
    else
        std::snprintf(buffer, sizeof buffer, "%lldh %lldm", static_cast<long long>(ms / 3'600'000),
                      static_cast<long long>(ms % 3'600'000 / 60'000));
    return buffer;
}

std::string format_duration(double seconds, DurationStyle style) {
    char buffer[64];
    switch (style) {
    case DurationStyle::progress:
        return format_duration(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
    case DurationStyle::report: {
        if (seconds < 59.95) { // above, "%.1f" would print 60.0s
            std::snprintf(buffer, sizeof buffer, "%.1fs", seconds);
            return buffer;
        }
        long long total = std::llround(seconds);
        if (total < 3600)
            std::snprintf(buffer, sizeof buffer, "%lldm %llds", total / 60, total % 60);
        else
            std::snprintf(buffer, sizeof buffer, "%lldh %lldm", total / 3600, total % 3600 / 60);
        return buffer;
    }
    case DurationStyle::minutes_colon: {
        int total = static_cast<int>(seconds);
        std::snprintf(buffer, sizeof buffer, "%dm%02ds", total / 60, total % 60);
        return buffer;
    }
    }
    return "?";
}

std::optional<uint64_t> parse_size(std::string_view text) {
    auto number = leading_number(text);
    if (!number)
        return std::nullopt;
    uint64_t scale = 1;
    if (!text.empty()) {
        switch (std::toupper(static_cast<unsigned char>(text[0]))) {
        case 'K':
            scale = 1ULL << 10;
            break;
        case 'M':
            scale = 1ULL << 20;
            break;
        case 'G':
            scale = 1ULL << 30;
            break;
        case 'T':
            scale = 1ULL << 40;
            break;
        case 'B':
            scale = 1;
            break;
        default:
            return std::nullopt;
        }
        text.remove_prefix(1);
        if (scale > 1 && !text.empty() && text[0] == 'i')
            text.remove_prefix(1);
        if (scale > 1 && !text.empty() && (text[0] == 'B' || text[0] == 'b'))
            text.remove_prefix(1);
    }
    if (!text.empty())
        return std::nullopt;
    return checked_multiply(*number, scale);
}

} // namespace rig::util
