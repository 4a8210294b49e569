// SPDX-License-Identifier: MIT
// The seed-004 table of a run: one row per cell with duration spread, host CPU and
// error counts, from the samples in the database.
#pragma once

#include "core/cell.hpp"
#include "core/sample.hpp"

#include <string>
#include <vector>

namespace rig::report {

// Cells in the given order; samples of any cell, in any order.
std::string render_results(const std::vector<core::Cell>& cells,
                           const std::vector<core::Sample>& samples);

// "12.3s", "20m 40s": durations as a mail reader expects them.
std::string format_seconds(double seconds);

} // namespace rig::report
