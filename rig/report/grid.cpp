// SPDX-License-Identifier: MIT
// The flat 9p cache/msize table: one row per cell, in the column order of Schoenebeck's.
#include "report/grid.hpp"

#include "report/cells.hpp"
#include "report/metrics.hpp"
#include "report/pivot.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace rig::report {

namespace {

std::string msize_text(const CellResult& result) {
    auto requested = result.cell.msize();
    if (!requested)
        return "-";
    std::string text = std::to_string(*requested);
    if (result.msize_negotiated)
        text += "→" + std::to_string(*result.msize_negotiated);
    return text;
}

std::string cache_text(const CellResult& result) {
    std::string requested = result.cell.cache().empty() ? "default" : result.cell.cache();
    if (!result.cache_negotiated.empty())
        return requested + "→" + result.cache_negotiated;
    return requested;
}

std::string mean_sd_text(const CellResult& result) {
    if (result.duration.n < 2)
        return "-";
    return util::format_duration(result.duration.mean, util::DurationStyle::report) + " ± " +
           util::format_duration(result.duration.stddev, util::DurationStyle::report);
}

std::string cpu_text(const CellResult& result) {
    return result.cpu.n == 0 ? "-" : fmt::format("~{:.0f}%", result.cpu.median);
}

std::string errors_text(const CellResult& result) {
    if (result.errors == 0 && result.warnings == 0)
        return "none";
    std::string text;
    if (result.errors > 0)
        text = fmt::format("{} error{} in {}/{}", result.errors, result.errors == 1 ? "" : "s",
                           result.samples_with_errors, result.samples);
    if (result.warnings > 0)
        text += fmt::format("{}{} warning{}", text.empty() ? "" : ", ", result.warnings,
                            result.warnings == 1 ? "" : "s");
    return text;
}

// The p column: the test's p, or why there is none.
std::string decision_text(const Comparison& comparison) {
    switch (comparison.decision) {
    case Decision::tested:
        return util::format_p(comparison.test->p, util::PStyle::three_decimals);
    case Decision::too_few:
        break;
    case Decision::identical:
        return "identical";
    case Decision::exactly_different:
        return "exact";
    }
    return "n<2";
}

std::vector<std::string> comparison_cells(const std::vector<Comparison>& comparisons, size_t cell,
                                          const RenderOptions& options) {
    if (comparisons.empty())
        return {};
    const Comparison& comparison = comparisons[cell];
    switch (comparison.role) {
    case Role::baseline:
        return {"base", "", ""};
    case Role::no_twin:
        return {"-", "", ""};
    case Role::compared:
        break;
    }
    return {marked_difference(comparison, options), decision_text(comparison),
            case_label(comparison.twin)};
}

Grid flat_grid(const ReportData& data, const std::vector<Comparison>& comparisons,
               const RenderOptions& options) {
    Grid grid;
    const bool many_runs = data.runs.size() > 1;
    auto extras = extra_axes(data);
    grid.columns.push_back({"case"});
    if (many_runs)
        grid.columns.push_back({"run", Align::right});
    grid.columns.insert(grid.columns.end(),
                        {{"kernel"}, {"config"}, {"fs"}, {"msize", Align::right}, {"cache"}});
    for (const auto& axis : extras)
        grid.columns.push_back({axis});
    grid.columns.insert(grid.columns.end(), {{"duration", Align::right},
                                             {"mean ± sd", Align::right},
                                             {"n", Align::right},
                                             {"host cpu", Align::right}});
    // Chosen metrics show their n: a sample without a metric does not count.
    const bool chosen = !options.metrics.empty();
    auto metrics = metric_columns(data, options.metrics);
    for (const auto& metric : metrics) {
        grid.columns.push_back({metric.title, Align::right});
        if (chosen)
            grid.columns.push_back({"n", Align::right});
    }
    grid.columns.insert(grid.columns.end(), {{"errors/warnings"}, {"outcomes"}});
    if (options.baseline)
        grid.columns.insert(grid.columns.end(),
                            {{"vs " + baseline_text(*options.baseline), Align::right},
                             {"p", Align::right},
                             {"twin"}});
    for (size_t i = 0; i < data.cells.size(); ++i) {
        const CellResult& result = data.cells[i];
        std::vector<std::string> row{case_label(i)};
        if (many_runs)
            row.push_back(std::to_string(result.run_id));
        row.insert(row.end(),
                   {result.cell.kernel_name, result.cell.config, or_dash(result.cell.param("fs")),
                    msize_text(result), cache_text(result)});
        for (const auto& axis : extras)
            row.push_back(or_dash(result.cell.param(axis)));
        row.insert(row.end(), {median_text(result), mean_sd_text(result),
                               std::to_string(result.duration.n), cpu_text(result)});
        for (const auto& metric : metrics) {
            row.push_back(metric_median_text(result, metric.metric));
            if (chosen) {
                const MetricValues* values = find_metric(result, metric.metric);
                row.push_back(std::to_string(values ? values->summary.n : 0));
            }
        }
        row.insert(row.end(), {errors_text(result), outcomes_text(result)});
        auto compared = comparison_cells(comparisons, i, options);
        row.insert(row.end(), compared.begin(), compared.end());
        grid.rows.push_back(std::move(row));
        grid.cells.push_back(i);
    }
    grid.notes = legend(options, comparisons);
    for (size_t i = 0; i < data.cells.size(); ++i)
        for (const std::string& why : data.cells[i].why)
            grid.notes.push_back(case_label(i) + " " + why);
    return grid;
}

} // namespace

std::vector<std::string> legend(const RenderOptions& options,
                                const std::vector<Comparison>& comparisons) {
    if (!options.baseline)
        return {};
    const std::string metric = compared_metric(options);
    const std::string word = metric.empty() ? "gain" : "change";
    std::vector<std::string> lines;
    if (metric.empty())
        lines.push_back(fmt::format("gain vs {}: (base - cell) / base of the {} duration; "
                                    "positive is faster.",
                                    baseline_text(*options.baseline),
                                    statistic_name(options.test)));
    else
        lines.push_back(fmt::format("change vs {}: (cell - base) / base of the {} {}; positive "
                                    "is more.",
                                    baseline_text(*options.baseline), statistic_name(options.test),
                                    metric));
    lines.push_back(fmt::format("*{0}* is significant (two-sided {1}, p < {2}), ({0}) is not; "
                                "n<2: too few samples to test.",
                                word, std::string(core::test_name(options.test)), options.alpha));
    const bool exact = std::any_of(comparisons.begin(), comparisons.end(), [](const Comparison& c) {
        return c.decision == Decision::identical || c.decision == Decision::exactly_different;
    });
    if (exact)
        lines.push_back(fmt::format("exact: no spread on either side (every sample has the same "
                                    "value) and the values differ, so *{}* without a test; "
                                    "identical: no spread and the same value.",
                                    word));
    return lines;
}

Table table_of(const Grid& grid) {
    Table table(grid.columns);
    for (const auto& row : grid.rows)
        table.add_row(row);
    return table;
}

Expected<Grid> results_grid(const ReportData& data, const std::vector<Comparison>& comparisons,
                            const RenderOptions& options) {
    if (options.rows.empty() && options.cols.empty())
        return flat_grid(data, comparisons, options);
    return pivot_grid(data, comparisons, options);
}

} // namespace rig::report
