// SPDX-License-Identifier: MIT
// The 9p cache/msize table of a run as `rig run` prints it at the end: one row per cell with
// duration spread, host CPU and error counts, through the report renderer and its
// templates (reports/table.txt.mustache in reports/summary.txt.mustache).
#pragma once

#include "core/cell.hpp"
#include "core/sample.hpp"
#include "report/render.hpp"

#include <string>
#include <vector>

namespace rig::report {

// Cells in the given order; samples of any cell, in any order.
std::string render_results(const std::vector<core::Cell>& cells,
                           const std::vector<core::Sample>& samples);

} // namespace rig::report
