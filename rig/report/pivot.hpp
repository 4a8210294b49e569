// SPDX-License-Identifier: MIT
// The pivot (`--rows`, `--cols`): cells placed by their keys' values, as a table and as JSON.
#pragma once

#include "report/compare.hpp"
#include "report/data.hpp"
#include "report/grid.hpp"
#include "report/render.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rig::report {

struct Pivot {
    std::vector<std::vector<std::string>> row_values;
    std::vector<std::vector<std::string>> col_values;
    std::vector<std::vector<std::optional<size_t>>> cell; // [row][col]
};

// A usage error for an unknown key, or for two cells that land on one place.
Expected<Pivot> pivot(const ReportData& data, const RenderOptions& options);

// The pivot as a table: each place shows the median and n of the compared value (the
// duration or the first metric), and its marked difference with a baseline.
Expected<Grid> pivot_grid(const ReportData& data, const std::vector<Comparison>& comparisons,
                          const RenderOptions& options);

} // namespace rig::report
