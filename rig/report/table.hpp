// SPDX-License-Identifier: MIT
// Fixed-width text tables that paste into a plain-text mail, and their markdown twin.
#pragma once

#include <string>
#include <vector>

namespace rig::report {

enum class Align { left, right };

struct Column {
    std::string title;
    Align align = Align::left;
};

// A table's lines without their newlines.
struct TableLines {
    std::string header;
    std::string rule; // markdown's line under the header that aligns the columns; "" in text
    std::vector<std::string> rows;
};

class Table final {
public:
    explicit Table(std::vector<Column> columns);
    void add_row(std::vector<std::string> cells);
    size_t rows() const { return m_rows.size(); }

    // Columns separated by two spaces, padded to the widest cell; no trailing blanks.
    std::string to_text() const;
    std::string to_markdown() const;
    // The same, line by line, for a template to lay out.
    TableLines text_lines() const;
    TableLines markdown_lines() const;

private:
    std::vector<size_t> widths() const;

    std::vector<Column> m_columns;
    std::vector<std::vector<std::string>> m_rows;
};

// A cell's text, or "-" where there is none, as the tables show an absent value.
std::string or_dash(const std::string& text);

} // namespace rig::report
