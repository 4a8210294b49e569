// SPDX-License-Identifier: MIT
// The pivot of the results: cells placed by their keys' values.
#include "report/pivot.hpp"

#include "report/cells.hpp"
#include "report/metrics.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <map>

namespace rig::report {

namespace {

Expected<void> check_pivot_keys(const ReportData& data, const RenderOptions& options) {
    auto keys = known_keys(data.cells);
    for (const auto* list : {&options.rows, &options.cols})
        for (const auto& key : *list)
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
                std::string known;
                for (const auto& k : keys)
                    known += (known.empty() ? "" : ", ") + k;
                return fail(ErrorKind::usage,
                            "unknown key '" + key + "' in --rows/--cols; keys are " + known);
            }
    return {};
}

std::vector<std::string> values_of(const CellResult& result, const std::vector<std::string>& keys) {
    std::vector<std::string> values;
    for (const auto& key : keys)
        values.push_back(or_dash(key_value(result, key)));
    return values;
}

} // namespace

Expected<Pivot> pivot(const ReportData& data, const RenderOptions& options) {
    RIG_TRY(check_pivot_keys(data, options));
    Pivot out;
    std::map<std::vector<std::string>, size_t> row_of, col_of;
    std::vector<std::pair<std::pair<size_t, size_t>, size_t>> placed;
    for (size_t i = 0; i < data.cells.size(); ++i) {
        auto row = values_of(data.cells[i], options.rows);
        auto col = values_of(data.cells[i], options.cols);
        auto [r, new_row] = row_of.emplace(row, out.row_values.size());
        if (new_row)
            out.row_values.push_back(row);
        auto [c, new_col] = col_of.emplace(col, out.col_values.size());
        if (new_col)
            out.col_values.push_back(col);
        placed.push_back({{r->second, c->second}, i});
    }
    out.cell.assign(out.row_values.size(),
                    std::vector<std::optional<size_t>>(out.col_values.size()));
    for (const auto& [at, i] : placed) {
        auto& slot = out.cell[at.first][at.second];
        if (slot) {
            // Two cells land on one spot: name what tells them apart.
            std::vector<std::string> differing;
            for (const auto& key : known_keys(data.cells))
                if (key != "cell" &&
                    key_value(data.cells[*slot], key) != key_value(data.cells[i], key))
                    differing.push_back(key);
            return fail(ErrorKind::usage,
                        "the pivot puts cases " + case_label(*slot) + " and " + case_label(i) +
                            " in one place; they differ in " + util::join(differing, ", ") +
                            ": add it to --rows or --cols, or select one with --where");
        }
        slot = i;
    }
    return out;
}

Expected<Grid> pivot_grid(const ReportData& data, const std::vector<Comparison>& comparisons,
                          const RenderOptions& options) {
    auto table = RIG_TRY(pivot(data, options));
    const std::string metric = compared_metric(options);
    Grid grid;
    for (const auto& key : options.rows)
        grid.columns.push_back({key});
    for (const auto& values : table.col_values)
        grid.columns.push_back({util::join(values, " "), Align::right});
    for (size_t r = 0; r < table.row_values.size(); ++r) {
        std::vector<std::string> row = table.row_values[r];
        for (size_t c = 0; c < table.col_values.size(); ++c) {
            auto cell = table.cell[r][c];
            if (!cell) {
                row.push_back("");
                continue;
            }
            const CellResult& result = data.cells[*cell];
            std::string text;
            if (metric.empty()) {
                text = median_text(result) + " n=" + std::to_string(result.duration.n);
            } else {
                const MetricValues* values = find_metric(result, metric);
                text = metric_median_text(result, metric) +
                       " n=" + std::to_string(values ? values->summary.n : 0);
            }
            if (!comparisons.empty() && comparisons[*cell].role == Role::compared)
                text += " " + marked_difference(comparisons[*cell], options);
            row.push_back(text);
        }
        grid.rows.push_back(std::move(row));
    }
    grid.notes.push_back((metric.empty() ? "duration" : metric) + " median and n; columns " +
                         util::join(options.cols, " ") +
                         (options.rows.empty() ? "" : ", rows " + util::join(options.rows, " ")) +
                         ".");
    auto more = legend(options, comparisons);
    grid.notes.insert(grid.notes.end(), more.begin(), more.end());
    return grid;
}

} // namespace rig::report
