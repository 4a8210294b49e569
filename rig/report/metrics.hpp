// SPDX-License-Identifier: MIT
// Which metrics the results table shows: the 9p counter columns chosen from the data, or
// the metrics `--metric` names, and how a metric's value reads in a table cell.
#pragma once

#include "report/data.hpp"
#include "util/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rig::report {

// Requests on the share under test, counted on the host; its request types are
// "9p.work.<type>".
inline constexpr std::string_view k_work_requests = "9p.work.requests";
inline constexpr std::string_view k_work_prefix = "9p.work.";

struct MetricColumn {
    std::string title;
    std::string metric;
};

// Every metric name some cell carries, sorted.
std::vector<std::string> metric_names(const ReportData& data);
// The metric's unit as the first cell that has it stored it; "" when none has it.
std::string metric_unit(const ReportData& data, const std::string& metric);

// The request types of the share under test ("9p.work.getattr", ...; not the totals or
// the byte counts) whose cell medians differ most: the largest ratio of the highest median
// to the lowest over the cells that have the type, ties to the larger absolute difference,
// then by name. A type no two cells have, or alike in every cell, is not among them.
std::vector<std::string> most_differing_types(const ReportData& data, size_t at_most);

// The columns the table shows after host CPU. Without chosen metrics: "9p requests" when
// a cell has 9p.work.requests, then up to three most differing request types, titled by
// the type ("getattr"). With them: one column per chosen metric, titled by its name and
// its unit when the name does not end with it ("guest.cpu.system (s)").
std::vector<MetricColumn> metric_columns(const ReportData& data,
                                         const std::vector<std::string>& chosen);

// The metric name prefixes a table shows: the chosen metrics, else the share's counters.
std::vector<std::string> table_metric_prefixes(const std::vector<std::string>& chosen);

// A usage error for a chosen metric that is not among `known`, the names the selected
// cells carry: the name it is a typo of, or else every known name.
Expected<void> check_metrics(const std::vector<std::string>& known,
                             const std::vector<std::string>& chosen);

// A cell's median of the metric, or "n/a" when none of its samples has it: unknown,
// never 0.
std::string metric_median_text(const CellResult& result, const std::string& metric);

// "1234", "12345.5", "0.125": a whole number as one, a fraction from 1000 up to a tenth,
// a smaller one to four significant digits.
std::string metric_text(double value);

} // namespace rig::report
