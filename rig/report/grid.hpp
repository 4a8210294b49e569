// SPDX-License-Identifier: MIT
// The rows and columns every format draws from, so that text, markdown, CSV and HTML
// tables always agree. Internal to report/.
#pragma once

#include "report/compare.hpp"
#include "report/data.hpp"
#include "report/render.hpp"
#include "report/table.hpp"

#include <string>
#include <vector>

namespace rig::report {

struct Grid {
    std::vector<Column> columns;
    std::vector<std::vector<std::string>> rows;
    std::vector<size_t> cells;      // the cell each row shows; flat tables only
    std::vector<std::string> notes; // legend lines under the table
};

// The flat 9p cache/msize table, or the pivot when options.rows/cols are given. comparisons
// is empty without a baseline.
Expected<Grid> results_grid(const ReportData& data, const std::vector<Comparison>& comparisons,
                            const RenderOptions& options);

Table table_of(const Grid& grid);

// The key to a comparison's marks, under the flat table and the pivot; none without a
// baseline.
std::vector<std::string> legend(const RenderOptions& options,
                                const std::vector<Comparison>& comparisons);

} // namespace rig::report
