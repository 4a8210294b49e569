// SPDX-License-Identifier: MIT
// String helpers with no rig knowledge.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rig::util {

std::string join(const std::vector<std::string>& parts, std::string_view separator);

// `value` with `digits` digits after the point ("%.*f").
std::string fixed(double value, int digits);
// `value` in up to 10 significant digits ("%.10g"): a count in full, without a ".000".
std::string compact(double value);

// How a p-value prints: the report's tables, or the short form of a bisect's evidence.
enum class PStyle {
    three_decimals,    // "0.042", and "<0.001" below that
    three_significant, // "0.0421", "1.2e-05"
};
std::string format_p(double p, PStyle style);

// `text` with each character that has an entity in `entities` replaced by it, as XML and
// HTML need: the markup's own characters, and for attributes the quotes.
struct Entity {
    char character;
    std::string_view entity;
};
std::string escape(std::string_view text, const std::vector<Entity>& entities);
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

// A commit id as rig's reports and mails write it: its first 12 hex digits.
std::string short_sha(std::string_view sha);

// `text` as one word of a POSIX shell script: as it is when it holds only characters no
// shell treats specially, else in single quotes (a quote inside as '\'').
std::string shell_word(std::string_view text);

// Edit distance counting a swap of neighbours as one edit, for "did you mean".
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, or "" when none is close enough to be a typo.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

} // namespace rig::util
