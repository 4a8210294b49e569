// SPDX-License-Identifier: MIT
// String helpers with no rig knowledge.
#include "util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace rig::util {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (i > 0)
            out += separator;
        out += parts[i];
    }
    return out;
}

std::string fixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

std::string compact(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", value);
    return buffer;
}

std::string format_p(double p, PStyle style) {
    char buffer[32];
    if (style == PStyle::three_decimals) {
        if (p < 0.001)
            return "<0.001";
        std::snprintf(buffer, sizeof buffer, "%.3f", p);
    } else {
        std::snprintf(buffer, sizeof buffer, "%.3g", p);
    }
    return buffer;
}

std::string escape(std::string_view text, const std::vector<Entity>& entities) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        auto found = std::find_if(entities.begin(), entities.end(),
                                  [c](const Entity& entity) { return entity.character == c; });
        if (found == entities.end())
            out += c;
        else
            out += found->entity;
    }
    return out;
}

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        size_t end = text.find(separator, start);
        parts.emplace_back(text.substr(start, end - start));
        if (end == std::string_view::npos)
            return parts;
        start = end + 1;
    }
}

std::string_view trim(std::string_view text) {
    const char* k_space = " \t\r\n";
    size_t begin = text.find_first_not_of(k_space);
    if (begin == std::string_view::npos)
        return {};
    size_t end = text.find_last_not_of(k_space);
    return text.substr(begin, end - begin + 1);
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

std::string short_sha(std::string_view sha) {
    return std::string(sha.substr(0, 12));
}

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
    std::string out;
    size_t at = 0;
    for (size_t found; (found = text.find(from, at)) != std::string_view::npos;
         at = found + from.size()) {
        out.append(text.substr(at, found - at));
        out.append(to);
    }
    out.append(text.substr(at));
    return out;
}

std::string shell_word(std::string_view text) {
    auto plain = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               (c != '\0' && std::strchr("_./=:,+@%-", c));
    };
    if (!text.empty() && std::all_of(text.begin(), text.end(), plain))
        return std::string(text);
    return "'" + replace_all(text, "'", "'\\''") + "'";
}

size_t edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment: a swap of two neighbours ("kmv" for "kvm") is one edit.
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
    // A third of the word's length catches transpositions and single slips
    // ("chache", "msiz") without proposing unrelated keys.
    size_t best_distance = std::max<size_t>(1, (word.size() + 2) / 3) + 1;
    std::string best;
    for (const auto& candidate : candidates) {
        size_t distance = edit_distance(word, candidate);
        if (distance < best_distance) {
            best_distance = distance;
            best = candidate;
        }
    }
    return best;
}

} // namespace rig::util
