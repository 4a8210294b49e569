// SPDX-License-Identifier: MIT
// Finding a tab in a scenario's indentation, line by line, with as much of YAML's lexical
// state as tells indentation from content.
#include "spec/indentation.hpp"

#include <string>

namespace rig::spec {

namespace {

// What the lines before carry into the next one.
struct LexState {
    int flow_depth = 0;    // open [ and {
    char quote = 0;        // ' or " of a quoted scalar still open, or 0
    int block_indent = -1; // a block scalar's parent indentation, or -1 outside one
};

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

// Follows quotes, comments and brackets through one line's content, from `at`; returns
// the content's end, before a comment.
size_t scan(std::string_view line, size_t at, LexState& state) {
    for (size_t i = at; i < line.size(); ++i) {
        char c = line[i];
        if (state.quote == '"') {
            if (c == '\\')
                ++i;
            else if (c == '"')
                state.quote = 0;
            continue;
        }
        if (state.quote == '\'') {
            // '' is an escaped quote: closing and opening again gives the same state.
            if (c == '\'')
                state.quote = 0;
            continue;
        }
        bool starts_token = i == at || is_blank(line[i - 1]) || line[i - 1] == '[' ||
                            line[i - 1] == '{' || line[i - 1] == ',';
        if (c == '#' && (i == at || is_blank(line[i - 1])))
            return i;
        if ((c == '"' || c == '\'') && starts_token)
            state.quote = c;
        else if (c == '[' || c == '{')
            ++state.flow_depth;
        else if ((c == ']' || c == '}') && state.flow_depth > 0)
            --state.flow_depth;
    }
    return line.size();
}

// "key: |", "- >-", "key: |2 # comment": the content ends with a block scalar's indicator.
bool opens_block_scalar(std::string_view content) {
    while (!content.empty() && is_blank(content.back()))
        content.remove_suffix(1);
    while (!content.empty() && (content.back() == '+' || content.back() == '-' ||
                                (content.back() >= '1' && content.back() <= '9')))
        content.remove_suffix(1);
    if (content.empty() || (content.back() != '|' && content.back() != '>'))
        return false;
    content.remove_suffix(1);
    return content.empty() || is_blank(content.back());
}

} // namespace

std::optional<core::Loc> tab_in_indentation(std::string_view text) {
    LexState state;
    int line_number = 0;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        std::string_view line = text.substr(
            start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        ++line_number;
        size_t spaces = line.find_first_not_of(' ');
        size_t first = line.find_first_not_of(" \t");
        bool blank = first == std::string_view::npos;
        if (state.block_indent >= 0 && !blank && static_cast<int>(spaces) <= state.block_indent)
            state.block_indent = -1;
        if (state.block_indent < 0 && !blank) {
            bool continued = state.flow_depth > 0 || state.quote != 0;
            if (!continued && spaces != first && line[first] != '#')
                return core::Loc{line_number, static_cast<int>(spaces) + 1};
            size_t content_end = scan(line, first, state);
            if (state.flow_depth == 0 && state.quote == 0 &&
                opens_block_scalar(line.substr(first, content_end - first)))
                state.block_indent = static_cast<int>(spaces);
        }
        if (end == std::string_view::npos)
            break;
        start = end + 1;
    }
    return std::nullopt;
}

} // namespace rig::spec
