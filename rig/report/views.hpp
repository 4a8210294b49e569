// SPDX-License-Identifier: MIT
// What fills rig's report templates: the results table and notes, the HTML page, a user's own.
#pragma once

#include "report/compare.hpp"
#include "report/data.hpp"
#include "report/grid.hpp"
#include "report/render.hpp"

#include <string>
#include <vector>

namespace rig::report {

// The table as text or markdown (reports/table.txt.mustache) with its notes under it
// (reports/summary.txt.mustache): what `rig run` prints at its end and `rig report` by
// default.
Expected<std::string> summary_text(const Grid& grid, Format format);

// The self-contained page: reports/page.html.mustache.
Expected<std::string> html_page(const ReportData& data, const std::vector<Comparison>& comparisons,
                                const RenderOptions& options);

// options.template_file rendered with every view at once; a usage error when there is no
// such file or it does not parse.
Expected<std::string> user_template(const ReportData& data,
                                    const std::vector<Comparison>& comparisons,
                                    const RenderOptions& options);

} // namespace rig::report
