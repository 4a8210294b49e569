// SPDX-License-Identifier: MIT
// The rows and columns every format draws from, so that text, markdown, CSV and HTML
// tables always agree. Internal to report/.
#pragma once

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

std::string case_label(size_t index);
// "A) deb-6.1 debian 9p 512000 loose": a cell as the errors view names it.
std::string describe_cell(const ReportData& data, size_t cell);
// The metric the baseline and the pivot use; "" for the duration.
std::string compared_metric(const RenderOptions& options);

} // namespace rig::report
