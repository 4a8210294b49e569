// SPDX-License-Identifier: MIT
// Fixed-width text tables.
#include "report/table.hpp"

#include <algorithm>
#include <cassert>

namespace rig::report {

namespace {

// Display width: counts UTF-8 code points so that "→" and "µ" take one column.
size_t display_width(const std::string& text) {
    return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string pad(const std::string& text, size_t width, Align align) {
    std::string fill(width - std::min(width, display_width(text)), ' ');
    return align == Align::left ? text + fill : fill + text;
}

void strip_trailing_blanks(std::string& line) {
    while (!line.empty() && line.back() == ' ')
        line.pop_back();
}

// Each line with its newline; text has no rule.
std::string join_lines(const TableLines& lines) {
    std::string out = lines.header + "\n";
    if (!lines.rule.empty())
        out += lines.rule + "\n";
    for (const auto& row : lines.rows)
        out += row + "\n";
    return out;
}

} // namespace

Table::Table(std::vector<Column> columns) : m_columns(std::move(columns)) {}

void Table::add_row(std::vector<std::string> cells) {
    assert(cells.size() == m_columns.size());
    m_rows.push_back(std::move(cells));
}

std::vector<size_t> Table::widths() const {
    std::vector<size_t> widths;
    for (const Column& column : m_columns)
        widths.push_back(display_width(column.title));
    for (const auto& row : m_rows)
        for (size_t i = 0; i < row.size(); ++i)
            widths[i] = std::max(widths[i], display_width(row[i]));
    return widths;
}

TableLines Table::text_lines() const {
    auto width = widths();
    auto render = [&](auto cell_of) {
        std::string line;
        for (size_t i = 0; i < m_columns.size(); ++i) {
            if (i > 0)
                line += "  ";
            line += pad(cell_of(i), width[i], m_columns[i].align);
        }
        strip_trailing_blanks(line);
        return line;
    };
    TableLines lines{render([&](size_t i) { return m_columns[i].title; }), "", {}};
    for (const auto& row : m_rows)
        lines.rows.push_back(render([&](size_t i) { return row[i]; }));
    return lines;
}

TableLines Table::markdown_lines() const {
    auto escape = [](std::string cell) {
        std::string out;
        for (char c : cell) {
            if (c == '|')
                out += '\\';
            out += c;
        }
        return out;
    };
    TableLines lines{"|", "|", {}};
    for (const Column& column : m_columns) {
        lines.header += " " + escape(column.title) + " |";
        lines.rule += column.align == Align::right ? " ---: |" : " --- |";
    }
    for (const auto& row : m_rows) {
        std::string line = "|";
        for (const auto& cell : row)
            line += " " + escape(cell) + " |";
        lines.rows.push_back(line);
    }
    return lines;
}

std::string Table::to_text() const {
    return join_lines(text_lines());
}

std::string Table::to_markdown() const {
    return join_lines(markdown_lines());
}

std::string or_dash(const std::string& text) {
    return text.empty() ? "-" : text;
}

} // namespace rig::report
