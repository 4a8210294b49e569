// SPDX-License-Identifier: MIT
// The HTML report: one self-contained page (inline CSS and SVG, no scripts, nothing
// fetched) with charts, the results table and the error lines grouped by signature. The
// page is a template (reports/page.html.mustache); this builds what fills it.
#pragma once

#include "report/compare.hpp"
#include "report/data.hpp"
#include "report/render.hpp"
#include "util/json.hpp"

#include <string>
#include <vector>

namespace rig::report {

// The page's title: options.title, else "rig report: SCENARIO" of the first run.
std::string page_title(const ReportData& data, const RenderOptions& options);

// The page's parts as HTML: "charts" (three SVG figures), "results" (the table and its
// notes), "changes" (each compared cell's "what changed" block, or ""), "metrics" (collapsed, or ""
// without metrics) and "errors" (lines by signature).
Expected<util::Json> html_parts(const ReportData& data, const std::vector<Comparison>& comparisons,
                                const RenderOptions& options);

// Text with &, <, >, " and ' escaped, for element content and attribute values.
std::string escape_html(const std::string& text);

// An SVG coordinate or length: a tenth of a pixel is fine enough.
std::string svg_number(double value);

// A round scale top at or above the largest value, so that grid lines fall on round numbers.
double nice_max(double value);

} // namespace rig::report
