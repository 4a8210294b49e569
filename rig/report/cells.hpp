// SPDX-License-Identifier: MIT
// One cell as every form of the report reads it: case label, values, comparison mark.
#pragma once

#include "core/significance.hpp"
#include "report/compare.hpp"
#include "report/data.hpp"
#include "report/render.hpp"

#include <string>
#include <vector>

namespace rig::report {

// "A)", ..., "Z)", "AA)": the case the index-th cell is in every table.
std::string case_label(size_t index);
// "A", ..., "AA": the case without its parenthesis, as CSV, JSON and HTML carry it.
std::string case_name(size_t index);
// "A) deb-6.1 debian 9p 512000 loose": a cell as the errors view names it.
std::string describe_cell(const ReportData& data, size_t cell);
// The metric the baseline and the pivot use; "" for the duration.
std::string compared_metric(const RenderOptions& options);

// The axes without a column of their own in Schoenebeck's table, sorted.
std::vector<std::string> extra_axes(const ReportData& data);

// The duration's median, or "-" without samples.
std::string median_text(const CellResult& result);
// "3 errors, 2 ok", or "no samples".
std::string outcomes_text(const CellResult& result);

// "KEY=VALUE".
std::string baseline_text(const Baseline& baseline);
// What the test compares: "mean" (Welch) or "median" (Mann-Whitney).
std::string statistic_name(core::Test test);
// What the comparison rests on: the test, or why none was needed.
std::string method_name(const Comparison& comparison, core::Test test);
// The comparison's difference, marked as significant or not (mark_gain).
std::string marked_difference(const Comparison& comparison, const RenderOptions& options);

} // namespace rig::report
