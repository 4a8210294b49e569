// SPDX-License-Identifier: MIT
// String helpers with no rig knowledge.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rig::util {

std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::vector<std::string> split(std::string_view text, char separator);
// Calls `line` for each line of `text`, without its newline; a last line needs none.
template <typename LineFunction> void for_each_line(std::string_view text, LineFunction&& line) {
    while (!text.empty()) {
        size_t end = text.find('\n');
        line(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
}
std::string_view trim(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);
// `text` with every occurrence of `from` (not empty) replaced by `to`.
std::string replace_all(std::string_view text, std::string_view from, std::string_view to);

// Edit distance counting a swap of neighbours as one edit, for "did you mean".
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is close enough to be a typo.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

} // namespace rig::util
