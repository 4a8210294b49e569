// SPDX-License-Identifier: MIT
// The coherency table, beside the 9p cache/msize table: per cell that ran the coherency
// probe (workload/coherency.hpp), what its mount promises about a change on the server's
// side and, per kind of change, how long the guest still saw the old state.
#pragma once

#include "report/data.hpp"
#include "report/grid.hpp"
#include "report/render.hpp"
#include "util/error.hpp"

#include <string>

namespace rig::report {

// What the table says it shows, above it in every form.
inline constexpr const char* k_coherency_heading =
    "Coherency: how long the guest still saw a file as it was before the server changed it "
    "(median; > the window: never within it)";

// One row per cell that ran the probe; no rows when none did.
Grid coherency_grid(const ReportData& data);

// Text or markdown; "" when no cell has the probe's metrics.
std::string coherency_text(const ReportData& data, Format format);

} // namespace rig::report
