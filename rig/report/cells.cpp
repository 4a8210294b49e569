// SPDX-License-Identifier: MIT
// One cell's label and values as the report's tables and files show them.
#include "report/cells.hpp"

#include "util/units.hpp"

#include <algorithm>
#include <set>

namespace rig::report {

namespace {

// Axes that have their own columns in the order of Schoenebeck's 9p cache/msize table; any other
// axis follows them.
const std::vector<std::string> k_fixed_axes{"config", "fs", "msize", "cache"};

} // namespace

std::vector<std::string> extra_axes(const ReportData& data) {
    std::set<std::string> axes;
    for (const CellResult& result : data.cells)
        for (const auto& [axis, value] : result.cell.params)
            if (std::find(k_fixed_axes.begin(), k_fixed_axes.end(), axis) == k_fixed_axes.end())
                axes.insert(axis);
    return {axes.begin(), axes.end()};
}

std::string median_text(const CellResult& result) {
    return result.duration.n == 0
               ? "-"
               : util::format_duration(result.duration.median, util::DurationStyle::report);
}

std::string outcomes_text(const CellResult& result) {
    std::string text;
    for (const auto& [outcome, count] : result.outcomes)
        text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + outcome;
    return text.empty() ? "no samples" : text;
}

std::string baseline_text(const Baseline& baseline) {
    return baseline.key + "=" + baseline.value;
}

std::string statistic_name(core::Test test) {
    return test == core::Test::welch ? "mean" : "median";
}

// The duration's gain as mmtests marks it; a metric's plain change, since rig cannot know
// whether more of it is better.
std::string marked_difference(const Comparison& comparison, const RenderOptions& options) {
    return mark_gain(compared_metric(options).empty() ? comparison.gain_percent
                                                      : comparison.change_percent,
                     comparison.significant);
}

std::string method_name(const Comparison& comparison, core::Test test) {
    switch (comparison.decision) {
    case Decision::identical:
        return "identical (spread 0)";
    case Decision::exactly_different:
        return "exactly different (spread 0)";
    case Decision::tested:
    case Decision::too_few:
        break;
    }
    return std::string(core::test_name(test));
}

std::string case_name(size_t index) {
    std::string name;
    for (size_t n = index + 1; n > 0; n = (n - 1) / 26)
        name.insert(name.begin(), static_cast<char>('A' + (n - 1) % 26));
    return name;
}

std::string case_label(size_t index) {
    return case_name(index) + ")";
}

std::string describe_cell(const ReportData& data, size_t cell) {
    const CellResult& result = data.cells[cell];
    std::string text = case_label(cell);
    if (data.runs.size() > 1)
        text += " run " + std::to_string(result.run_id);
    text += " " + result.cell.kernel_name + " " + result.cell.config;
    for (const auto& [axis, value] : result.cell.params)
        if (axis != "config")
            text += " " + axis + "=" + value;
    return text;
}

std::string compared_metric(const RenderOptions& options) {
    return options.metrics.empty() ? "" : options.metrics.front();
}

} // namespace rig::report
