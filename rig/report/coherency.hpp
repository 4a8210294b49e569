// SPDX-License-Identifier: MIT
// The coherency table, beside the 9p cache/msize table: per cell that ran the coherency
// probe (workload/coherency.hpp), what its mount promises about a change on the server's
// side and, per kind of change, how long the guest still saw the old state.
#pragma once

#include "report/data.hpp"
#include "report/render.hpp"
#include "util/error.hpp"

#include <string>

namespace rig::report {

// Text or markdown; "" when no cell has the probe's metrics.
Expected<std::string> coherency_text(const ReportData& data, Format format);

} // namespace rig::report
