// SPDX-License-Identifier: MIT
// The coherency table.
#include "report/coherency.hpp"

#include "core/fs.hpp"
#include "core/scenario.hpp"
#include "report/cells.hpp"
#include "report/grid.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace rig::report {

namespace {

// The median time a kind of change stayed unseen: "0.95 s", "> 2.00 s" when the median
// sample never saw it within its window, "-" when the cell's probe made no such change.
std::string stale_text(const CellResult& result, core::Change change) {
    const MetricValues* seconds = find_metric(result, core::stale_metric(change, "seconds"));
    if (!seconds)
        return "-";
    const MetricValues* unseen = find_metric(result, core::stale_metric(change, "unseen"));
    const bool never = unseen && unseen->summary.median > 0;
    return (never ? "> " : "") + util::fixed(seconds->summary.median, 2) + " s";
}

// "kept", or "broken in 2 of 3" samples; "-" where nothing is promised.
std::string kept_text(const CellResult& result) {
    const MetricValues* broken = find_metric(result, core::k_stale_broken);
    if (!broken || core::coherence(result.cell).promise == core::Coherence::Promise::none)
        return "-";
    size_t samples = 0;
    for (const core::Distribution::Entry& entry : broken->values.entries())
        samples += entry.value > 0 ? entry.count : 0;
    if (samples == 0)
        return "kept";
    return "broken in " + std::to_string(samples) + " of " + std::to_string(broken->values.size());
}

// The cell's mode: its cache, or a fuse cell's knobs.
std::string mode_text(const core::Cell& cell) {
    if (core::has_cache_axis(cell.fs())) {
        std::string cache = core::cache_or_default(cell);
        return cache.empty() ? "default" : cache;
    }
    std::vector<std::string> knobs;
    for (const std::string_view axis : cell.fs().axes)
        if (std::string value = cell.param(std::string(axis)); !value.empty())
            knobs.push_back(std::string(axis) + "=" + value);
    return knobs.empty() ? "default" : util::join(knobs, " ");
}

} // namespace

Grid coherency_grid(const ReportData& data) {
    const std::vector<core::Change>& changes = core::all_changes();
    Grid grid;
    grid.columns = {{"case"}, {"kernel"}, {"config"}, {"fs"}, {"mode"}, {"promise"}};
    for (core::Change change : changes)
        grid.columns.push_back({std::string(to_string(change)), Align::right});
    grid.columns.push_back({"kept"});
    for (size_t i = 0; i < data.cells.size(); ++i) {
        const CellResult& result = data.cells[i];
        if (!find_metric(result, core::k_stale_broken))
            continue;
        std::vector<std::string> row{
            case_label(i),          result.cell.kernel_name,
            result.cell.config,     std::string(result.cell.fs().name),
            mode_text(result.cell), core::describe(core::coherence(result.cell))};
        for (core::Change change : changes)
            row.push_back(stale_text(result, change));
        row.push_back(kept_text(result));
        grid.rows.push_back(std::move(row));
        grid.cells.push_back(i);
    }
    return grid;
}

std::string coherency_text(const ReportData& data, Format format) {
    Grid grid = coherency_grid(data);
    if (grid.rows.empty())
        return std::string();
    Table table = table_of(grid);
    return std::string(k_coherency_heading) + "\n" +
           (format == Format::markdown ? table.to_markdown() : table.to_text());
}

} // namespace rig::report
