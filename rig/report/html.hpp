// SPDX-License-Identifier: MIT
// The HTML report: one self-contained page (inline CSS and SVG, no scripts, nothing
// fetched) with charts, the results table and the error lines grouped by signature.
#pragma once

#include "report/compare.hpp"
#include "report/data.hpp"
#include "report/render.hpp"

#include <string>
#include <vector>

namespace rig::report {

Expected<std::string> render_html(const ReportData& data,
                                  const std::vector<Comparison>& comparisons,
                                  const RenderOptions& options);

// Text with &, <, >, " and ' escaped, for element content and attribute values.
std::string escape_html(const std::string& text);

} // namespace rig::report
