// SPDX-License-Identifier: MIT
// The JSON report (`rig report --format json`), and the runs and cells a user's template gets.
#pragma once

#include "report/compare.hpp"
#include "report/data.hpp"
#include "report/render.hpp"
#include "util/json.hpp"

#include <string>
#include <vector>

namespace rig::report {

// The runs and either the error signatures (View::errors) or the cells, with the
// baseline's test and the pivot when asked for. A usage error for a pivot that fails.
Expected<std::string> json_report(const ReportData& data,
                                  const std::vector<Comparison>& comparisons,
                                  const RenderOptions& options);

// Each run with the Debian packages its kernels resolved to.
util::Json runs_json(const ReportData& data);
// Each cell with its summaries, its metrics when any cell has some and its comparison
// with a baseline.
util::Json cells_json(const ReportData& data, const std::vector<Comparison>& comparisons,
                      const RenderOptions& options);

} // namespace rig::report
