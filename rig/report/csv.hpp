// SPDX-License-Identifier: MIT
// The results as CSV for a spreadsheet: the flat table in full, or the pivot's grid.
#pragma once

#include "report/compare.hpp"
#include "report/data.hpp"
#include "report/grid.hpp"
#include "report/render.hpp"

#include <string>
#include <vector>

namespace rig::report {

// The fields as one CSV line with its newline; a field with a comma, a quote or a line
// break is quoted.
std::string csv_line(const std::vector<std::string>& fields);

// One line per cell: its keys, the duration's summary, host CPU, errors, outcomes, the
// comparison with a baseline and five columns per metric. An absent value is empty.
std::string csv_table(const ReportData& data, const std::vector<Comparison>& comparisons,
                      const RenderOptions& options);

// The grid's column titles, then its rows.
std::string grid_csv(const Grid& grid);

} // namespace rig::report
