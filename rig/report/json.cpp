// SPDX-License-Identifier: MIT
// The results as JSON.
#include "report/json.hpp"

#include "report/cells.hpp"
#include "report/changes.hpp"
#include "report/errors.hpp"
#include "report/metrics.hpp"
#include "report/pivot.hpp"

namespace rig::report {

using util::Json;

namespace {

Json summary_json(const core::Summary& s, bool with_ci) {
    if (s.n == 0)
        return nullptr;
    Json out;
    out["n"] = s.n;
    out["median"] = s.median;
    out["q1"] = s.q1;
    out["q3"] = s.q3;
    out["mean"] = s.mean;
    out["stddev"] = s.n > 1 ? Json(s.stddev) : Json(nullptr);
    out["min"] = s.min;
    out["max"] = s.max;
    if (with_ci) {
        auto ci = core::mean_ci(s);
        out["ci95"] = ci ? Json::array({ci->first, ci->second}) : Json(nullptr);
    }
    return out;
}

Json cell_json(const ReportData& data, size_t i) {
    const CellResult& result = data.cells[i];
    Json cell;
    cell["case"] = case_name(i);
    cell["run"] = result.run_id;
    cell["cell"] = result.cell.id;
    cell["kernel"] = result.cell.kernel_name;
    cell["config"] = result.cell.config;
    cell["params"] = Json::object();
    for (const auto& [axis, value] : result.cell.params)
        cell["params"][axis] = value;
    auto requested = result.cell.msize();
    if (requested)
        cell["msize"] = {{"requested", *requested},
                         {"negotiated", result.msize_negotiated.value_or(*requested)}};
    else
        cell["msize"] = nullptr;
    cell["cache"] = {{"requested", result.cell.cache()},
                     {"negotiated", result.cache_negotiated.empty() ? result.cell.cache()
                                                                    : result.cache_negotiated}};
    cell["samples"] = result.samples;
    cell["outcomes"] = Json::object();
    for (const auto& [outcome, count] : result.outcomes)
        cell["outcomes"][outcome] = count;
    cell["duration_s"] = summary_json(result.duration, true);
    cell["host_cpu_percent"] = summary_json(result.cpu, false);
    cell["errors"] = result.errors;
    cell["warnings"] = result.warnings;
    cell["samples_with_errors"] = result.samples_with_errors;
    return cell;
}

// The metrics a cell's samples have, by name; one they lack is absent, not 0.
Json metrics_json(const CellResult& result) {
    Json out = Json::object();
    for (const auto& [name, values] : result.metrics) {
        Json metric;
        metric["unit"] = values.unit;
        metric.update(summary_json(values.summary, false));
        out[name] = std::move(metric);
    }
    return out;
}

Json comparison_json(const ReportData& data, const Comparison& c, core::Test test) {
    if (c.role == Role::baseline)
        return "base";
    if (c.role == Role::no_twin)
        return nullptr;
    Json out;
    out["baseline_case"] = case_name(c.twin);
    out["baseline_cell"] = data.cells[c.twin].cell.id;
    out["statistic"] = statistic_name(test);
    out["gain_percent"] = c.gain_percent;
    out["change_percent"] = c.change_percent;
    out["test"] = method_name(c, test);
    if (c.test) {
        out["t_or_u"] = c.test->statistic;
        if (test == core::Test::welch)
            out["df"] = c.test->df;
        out["p"] = c.test->p;
    } else {
        out["p"] = nullptr;
    }
    out["significant"] = c.significant;
    return out;
}

// The pivot as cases: which case each place shows, null where none is.
Json pivot_json(const Pivot& table, const RenderOptions& options) {
    Json rows = Json::array();
    for (size_t r = 0; r < table.row_values.size(); ++r) {
        Json row;
        for (size_t k = 0; k < options.rows.size(); ++k)
            row["key"][options.rows[k]] = table.row_values[r][k];
        row["cases"] = Json::array();
        for (size_t c = 0; c < table.col_values.size(); ++c) {
            auto cell = table.cell[r][c];
            row["cases"].push_back(cell ? Json(case_name(*cell)) : Json(nullptr));
        }
        rows.push_back(std::move(row));
    }
    Json cols = Json::array();
    for (const auto& values : table.col_values) {
        Json col;
        for (size_t k = 0; k < options.cols.size(); ++k)
            col[options.cols[k]] = values[k];
        cols.push_back(std::move(col));
    }
    return Json{{"rows", options.rows}, {"cols", options.cols}, {"columns", cols}, {"table", rows}};
}

} // namespace

Json runs_json(const ReportData& data) {
    Json runs = Json::array();
    for (const auto& run : data.runs) {
        Json packages = Json::array();
        for (const auto& used : data.kernel_packages)
            if (used.run_id == run.id)
                packages.push_back({{"kernel", used.kernel_name},
                                    {"package", used.package},
                                    {"version", used.package_version},
                                    {"samples", used.samples}});
        runs.push_back({{"id", run.id},
                        {"scenario", run.scenario},
                        {"started_at", run.started_at},
                        {"status", std::string(core::to_string(run.status))},
                        {"kernel_packages", packages}});
    }
    return runs;
}

Json cells_json(const ReportData& data, const std::vector<Comparison>& comparisons,
                const RenderOptions& options) {
    // Reports of samples without metrics read as they did before metrics existed.
    const bool with_metrics = !metric_names(data).empty();
    Json cells = Json::array();
    for (size_t i = 0; i < data.cells.size(); ++i) {
        Json cell = cell_json(data, i);
        if (with_metrics)
            cell["metrics"] = metrics_json(data.cells[i]);
        if (options.baseline)
            cell["comparison"] = comparison_json(data, comparisons[i], options.test);
        cells.push_back(std::move(cell));
    }
    if (options.baseline)
        for (const auto& changes : changes_of(data, comparisons, options.alpha))
            cells[changes.cell]["comparison"]["what_changed"] = changes_json(changes.set);
    return cells;
}

Expected<std::string> json_report(const ReportData& data,
                                  const std::vector<Comparison>& comparisons,
                                  const RenderOptions& options) {
    Json out;
    out["runs"] = runs_json(data);
    if (options.view == View::errors) {
        out["signatures"] = signatures_json(data);
        out["failures"] = failures_json(data);
        return util::json_text(out);
    }
    if (options.baseline) {
        out["baseline"] = baseline_text(*options.baseline);
        out["test"] = std::string(core::test_name(options.test));
        out["alpha"] = options.alpha;
        if (!compared_metric(options).empty())
            out["compared_metric"] = compared_metric(options);
    }
    out["cells"] = cells_json(data, comparisons, options);
    if (!options.rows.empty() || !options.cols.empty())
        out["pivot"] = pivot_json(RIG_TRY(pivot(data, options)), options);
    return util::json_text(out);
}

} // namespace rig::report
