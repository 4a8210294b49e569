// SPDX-License-Identifier: MIT
// The report renderer: grids for the tables, and the text, markdown, CSV and JSON forms.
#include "report/render.hpp"

#include "report/grid.hpp"
#include "report/html.hpp"
#include "report/metrics.hpp"
#include "report/template.hpp"
#include "util/file.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace rig::report {

namespace {

using util::Json;
using util::json_text;

// Axes that have their own columns in the order of Schoenebeck's 9p cache/msize table; any other
// axis follows them.
const std::vector<std::string> k_fixed_axes{"config", "fs", "msize", "cache"};

std::vector<std::string> extra_axes(const ReportData& data) {
    std::set<std::string> axes;
    for (const CellResult& result : data.cells)
        for (const auto& [axis, value] : result.cell.params)
            if (std::find(k_fixed_axes.begin(), k_fixed_axes.end(), axis) == k_fixed_axes.end())
                axes.insert(axis);
    return {axes.begin(), axes.end()};
}

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

std::string median_text(const CellResult& result) {
    return result.duration.n == 0
               ? "-"
               : util::format_duration(result.duration.median, util::DurationStyle::report);
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

// The duration's gain as mmtests marks it; a metric's plain change, since rig cannot know
// whether more of it is better.
std::string marked_difference(const Comparison& comparison, const RenderOptions& options) {
    return mark_gain(compared_metric(options).empty() ? comparison.gain_percent
                                                      : comparison.change_percent,
                     comparison.significant);
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
    return grid;
}

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

struct Pivot {
    std::vector<std::vector<std::string>> row_values;
    std::vector<std::vector<std::string>> col_values;
    std::vector<std::vector<std::optional<size_t>>> cell; // [row][col]
};

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

Table table_of(const Grid& grid) {
    Table table(grid.columns);
    for (const auto& row : grid.rows)
        table.add_row(row);
    return table;
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i)
        line += (i ? "," : "") + csv_field(fields[i]);
    return line + "\n";
}

// Shortest text that reads back as the same double; "" for an absent value.
std::string number(double value) {
    return fmt::format("{}", value);
}

// What the comparison rests on: the test, or why none was needed.
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

// Five columns per metric, sorted by name: unit, median, mean, sd and n; a cell whose
// samples lack the metric has n 0 and nothing else.
std::vector<std::string> metric_csv_header(const std::vector<std::string>& names) {
    std::vector<std::string> header;
    for (const auto& name : names)
        for (const char* field : {"_unit", "_median", "_mean", "_sd", "_n"})
            header.push_back(name + field);
    return header;
}

std::vector<std::string> metric_csv_fields(const CellResult& result,
                                           const std::vector<std::string>& names) {
    std::vector<std::string> fields;
    for (const auto& name : names) {
        const MetricValues* values = find_metric(result, name);
        if (!values) {
            fields.insert(fields.end(), {"", "", "", "", "0"});
            continue;
        }
        const core::Summary& s = values->summary;
        fields.insert(fields.end(), {values->unit, number(s.median), number(s.mean),
                                     s.n > 1 ? number(s.stddev) : "", std::to_string(s.n)});
    }
    return fields;
}

std::string csv_table(const ReportData& data, const std::vector<Comparison>& comparisons,
                      const RenderOptions& options) {
    auto extras = extra_axes(data);
    auto metric_list = metric_names(data);
    const std::string compared = compared_metric(options);
    std::vector<std::string> header{"case",   "run",
                                    "cell",   "kernel",
                                    "config", "fs",
                                    "msize",  "msize_negotiated",
                                    "cache",  "cache_negotiated"};
    header.insert(header.end(), extras.begin(), extras.end());
    for (const char* column :
         {"samples", "n", "duration_median_s", "duration_q1_s", "duration_q3_s", "duration_mean_s",
          "duration_stddev_s", "duration_ci95_low_s", "duration_ci95_high_s", "host_cpu_percent",
          "errors", "warnings", "samples_with_errors", "outcomes"})
        header.push_back(column);
    if (options.baseline) {
        for (const char* column : {"baseline_case", "gain_percent", "change_percent", "test",
                                   "statistic", "df", "p", "significant"})
            header.push_back(column);
        if (!compared.empty())
            header.push_back("compared_metric");
    }
    auto metric_header = metric_csv_header(metric_list);
    header.insert(header.end(), metric_header.begin(), metric_header.end());
    std::string out = csv_line(header);
    for (size_t i = 0; i < data.cells.size(); ++i) {
        const CellResult& result = data.cells[i];
        const core::Summary& d = result.duration;
        auto ci = core::mean_ci(d);
        auto measured = [&](double value) { return d.n > 0 ? number(value) : std::string(); };
        auto requested = result.cell.msize();
        std::vector<std::string> row{
            case_label(i).substr(0, case_label(i).size() - 1),
            std::to_string(result.run_id),
            result.cell.id,
            result.cell.kernel_name,
            result.cell.config,
            result.cell.param("fs"),
            requested ? std::to_string(*requested) : "",
            result.msize_negotiated ? std::to_string(*result.msize_negotiated)
                                    : (requested ? std::to_string(*requested) : ""),
            result.cell.cache(),
            result.cache_negotiated.empty() ? result.cell.cache() : result.cache_negotiated};
        for (const auto& axis : extras)
            row.push_back(result.cell.param(axis));
        row.insert(row.end(),
                   {std::to_string(result.samples), std::to_string(d.n), measured(d.median),
                    measured(d.q1), measured(d.q3), measured(d.mean),
                    d.n > 1 ? number(d.stddev) : "", ci ? number(ci->first) : "",
                    ci ? number(ci->second) : "", result.cpu.n > 0 ? number(result.cpu.median) : "",
                    std::to_string(result.errors), std::to_string(result.warnings),
                    std::to_string(result.samples_with_errors), outcomes_text(result)});
        if (options.baseline) {
            const Comparison& c = comparisons[i];
            if (c.role == Role::compared) {
                std::string twin = case_label(c.twin);
                row.insert(row.end(),
                           {twin.substr(0, twin.size() - 1), number(c.gain_percent),
                            number(c.change_percent), method_name(c, options.test),
                            c.test ? number(c.test->statistic) : "",
                            c.test && options.test == core::Test::welch ? number(c.test->df) : "",
                            c.test ? number(c.test->p) : "", c.significant ? "yes" : "no"});
            } else {
                row.insert(row.end(),
                           {c.role == Role::baseline ? "base" : "", "", "", "", "", "", "", ""});
            }
            if (!compared.empty())
                row.push_back(compared);
        }
        auto metric_fields = metric_csv_fields(result, metric_list);
        row.insert(row.end(), metric_fields.begin(), metric_fields.end());
        out += csv_line(row);
    }
    return out;
}

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

Json cell_json(const ReportData& data, size_t i) {
    const CellResult& result = data.cells[i];
    Json cell;
    cell["case"] = case_label(i).substr(0, case_label(i).size() - 1);
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
    out["baseline_case"] = case_label(c.twin).substr(0, case_label(c.twin).size() - 1);
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

Json signatures_json(const ReportData& data) {
    Json out = Json::array();
    for (const auto& group : data.signatures) {
        Json entry;
        entry["severity"] = group.severity == core::Severity::error ? "error" : "warning";
        entry["signature"] = group.signature;
        entry["lines"] = group.lines;
        entry["samples"] = group.samples;
        entry["cells"] = Json::array();
        for (const auto& occurrence : group.cells) {
            const CellResult& result = data.cells[occurrence.cell];
            std::string label = case_label(occurrence.cell);
            entry["cells"].push_back({{"case", label.substr(0, label.size() - 1)},
                                      {"run", result.run_id},
                                      {"cell", result.cell.id},
                                      {"lines", occurrence.lines},
                                      {"samples", occurrence.samples},
                                      {"first",
                                       {{"repetition", occurrence.repetition},
                                        {"source", occurrence.source},
                                        {"line", occurrence.line},
                                        {"excerpt", occurrence.excerpt}}}});
        }
        out.push_back(std::move(entry));
    }
    return out;
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
    return cells;
}

Expected<std::string> json_report(const ReportData& data,
                                  const std::vector<Comparison>& comparisons,
                                  const RenderOptions& options) {
    Json out;
    out["runs"] = runs_json(data);
    if (options.view == View::errors) {
        out["signatures"] = signatures_json(data);
        return json_text(out);
    }
    if (options.baseline) {
        out["baseline"] = baseline_text(*options.baseline);
        out["test"] = std::string(core::test_name(options.test));
        out["alpha"] = options.alpha;
        if (!compared_metric(options).empty())
            out["compared_metric"] = compared_metric(options);
    }
    out["cells"] = cells_json(data, comparisons, options);
    if (!options.rows.empty() || !options.cols.empty()) {
        auto table = RIG_TRY(pivot(data, options));
        Json rows = Json::array();
        for (size_t r = 0; r < table.row_values.size(); ++r) {
            Json row;
            for (size_t k = 0; k < options.rows.size(); ++k)
                row["key"][options.rows[k]] = table.row_values[r][k];
            row["cases"] = Json::array();
            for (size_t c = 0; c < table.col_values.size(); ++c) {
                auto cell = table.cell[r][c];
                row["cases"].push_back(
                    cell ? Json(case_label(*cell).substr(0, case_label(*cell).size() - 1))
                         : Json(nullptr));
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
        out["pivot"] = {
            {"rows", options.rows}, {"cols", options.cols}, {"columns", cols}, {"table", rows}};
    }
    return json_text(out);
}

std::string indent(const std::string& text, const std::string& prefix) {
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        out += prefix + text.substr(start, end - start) + "\n";
        start = end + 1;
    }
    return out;
}

std::string severity_text(core::Severity severity) {
    return severity == core::Severity::error ? "error" : "warning";
}

std::string plural(int64_t n, const std::string& word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string errors_text_view(const ReportData& data, Format format) {
    if (data.signatures.empty())
        return "no error or warning lines in the selected cells\n";
    std::string out;
    const bool markdown = format == Format::markdown;
    for (const auto& group : data.signatures) {
        std::string head = fmt::format(
            "{} in {}, {}: {}", plural(group.lines, "line"), plural(group.samples, "sample"),
            plural(static_cast<int64_t>(group.cells.size()), "cell"), group.signature);
        out += markdown
                   ? "### " + severity_text(group.severity) + ": `" + group.signature + "`\n\n" +
                         plural(group.lines, "line") + " in " + plural(group.samples, "sample") +
                         ", " + plural(static_cast<int64_t>(group.cells.size()), "cell") + "\n\n"
                   : severity_text(group.severity) + "  " + head + "\n";
        for (const auto& occurrence : group.cells) {
            const CellResult& result = data.cells[occurrence.cell];
            std::string where = fmt::format(
                "{}: {} in {}/{}; first in sample #{} ({})", describe_cell(data, occurrence.cell),
                plural(occurrence.lines, "line"), occurrence.samples, result.samples,
                occurrence.repetition, or_dash(occurrence.source));
            if (markdown)
                out += "- " + where + "\n\n" + indent(occurrence.excerpt, "      ") + "\n";
            else
                out += "  " + where + "\n" + indent(occurrence.excerpt, "      ");
        }
        if (!markdown)
            out += "\n";
    }
    if (!markdown)
        out.pop_back();
    return out;
}

std::string errors_csv(const ReportData& data) {
    std::string out = csv_line({"severity", "signature", "case", "run", "cell", "kernel", "lines",
                                "samples", "first_repetition", "first_source", "first_line"});
    for (const auto& group : data.signatures)
        for (const auto& occurrence : group.cells) {
            const CellResult& result = data.cells[occurrence.cell];
            std::string label = case_label(occurrence.cell);
            out += csv_line(
                {severity_text(group.severity), group.signature, label.substr(0, label.size() - 1),
                 std::to_string(result.run_id), result.cell.id, result.cell.kernel_name,
                 std::to_string(occurrence.lines), std::to_string(occurrence.samples),
                 std::to_string(occurrence.repetition), occurrence.source, occurrence.line});
        }
    return out;
}

// The table as text or markdown with its notes: reports/summary.txt.mustache's view.
Json summary_view(const Grid& grid, Format format) {
    Table table = table_of(grid);
    return {{"table", format == Format::markdown ? table.to_markdown() : table.to_text()},
            {"notes", grid.notes},
            {"has_notes", !grid.notes.empty()}};
}

// The HTML page's view: reports/page.html.mustache's names.
Expected<Json> page_view(const ReportData& data, const std::vector<Comparison>& comparisons,
                         const RenderOptions& options) {
    Json lines = Json::array();
    for (const std::string& line : util::split(runs_heading(data), '\n'))
        if (!line.empty())
            lines.push_back(line);
    Json html = RIG_TRY(html_parts(data, comparisons, options));
    return Json{{"title", page_title(data, options)},
                {"runs_lines", lines},
                {"style", builtin_template(Builtin::page_style)},
                {"html", std::move(html)}};
}

// A user's template gets every view at once (reports/README.md lists the names): the
// page's, the summary's as text and as markdown, and the JSON report's runs and cells.
Expected<std::string> render_user_template(const ReportData& data,
                                           const std::vector<Comparison>& comparisons,
                                           const RenderOptions& options) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(options.template_file, ec))
        return fail(ErrorKind::usage, "no template file " + options.template_file.string());
    Json view = RIG_TRY(page_view(data, comparisons, options));
    auto grid = RIG_TRY(results_grid(data, comparisons, options));
    view.update(summary_view(grid, Format::text));
    view["table_markdown"] = table_of(grid).to_markdown();
    view["runs_heading"] = runs_heading(data);
    view["runs"] = runs_json(data);
    view["cells"] = cells_json(data, comparisons, options);
    if (options.baseline) {
        view["baseline"] = baseline_text(*options.baseline);
        view["test"] = std::string(core::test_name(options.test));
    }
    return render_template(util::read_file(options.template_file), view,
                           options.template_file.string());
}

} // namespace

std::string case_label(size_t index) {
    std::string label;
    for (size_t n = index + 1; n > 0; n = (n - 1) / 26)
        label.insert(label.begin(), static_cast<char>('A' + (n - 1) % 26));
    return label + ")";
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

std::string runs_heading(const ReportData& data) {
    std::string out;
    for (const auto& run : data.runs) {
        out += fmt::format("{}, run {} ({}, started {})\n", run.scenario, run.id,
                           core::to_string(run.status), run.started_at);
        for (const auto& used : data.kernel_packages)
            if (used.run_id == run.id)
                out += fmt::format("  {}: {} {} ({} {})\n", used.kernel_name, used.package,
                                   used.package_version, used.samples,
                                   used.samples == 1 ? "sample" : "samples");
    }
    return out;
}

std::string compared_metric(const RenderOptions& options) {
    return options.metrics.empty() ? "" : options.metrics.front();
}

std::string mark_gain(double gain_percent, bool significant) {
    // "-0.00%" reads as a change in the wrong direction.
    if (std::fabs(gain_percent) < 0.005)
        gain_percent = 0;
    return significant ? fmt::format("*{:7.2f}%*", gain_percent)
                       : fmt::format("({:7.2f}%)", gain_percent);
}

Expected<Grid> results_grid(const ReportData& data, const std::vector<Comparison>& comparisons,
                            const RenderOptions& options) {
    if (options.rows.empty() && options.cols.empty())
        return flat_grid(data, comparisons, options);
    return pivot_grid(data, comparisons, options);
}

MetricsRead metrics_shown(const RenderOptions& options) {
    if (!options.template_file.empty())
        return MetricsRead::all;
    if (options.format == Format::csv || options.format == Format::json)
        return options.view == View::errors ? MetricsRead::none : MetricsRead::all;
    if (options.format == Format::html)
        return MetricsRead::all;
    return options.view == View::errors ? MetricsRead::none : MetricsRead::table;
}

Expected<std::string> render(const ReportData& data, const RenderOptions& options) {
    RIG_TRY(check_metrics(metric_names(data), options.metrics));
    std::vector<Comparison> comparisons;
    if (options.baseline)
        comparisons = RIG_TRY(compare(data, *options.baseline, options.test, options.alpha,
                                      compared_metric(options)));
    if (!options.template_file.empty())
        return render_user_template(data, comparisons, options);
    if (options.format == Format::html)
        return render_template(builtin_template(Builtin::page_html),
                               RIG_TRY(page_view(data, comparisons, options)),
                               "reports/page.html.mustache");
    if (options.format == Format::json)
        return json_report(data, comparisons, options);
    if (options.view == View::errors)
        return options.format == Format::csv ? errors_csv(data)
                                             : errors_text_view(data, options.format);

    const bool pivoted = !options.rows.empty() || !options.cols.empty();
    if (options.format == Format::csv && !pivoted)
        return csv_table(data, comparisons, options);
    auto grid = RIG_TRY(results_grid(data, comparisons, options));
    Table table = table_of(grid);
    if (options.format == Format::csv) {
        std::string out;
        std::vector<std::string> header;
        for (const auto& column : grid.columns)
            header.push_back(column.title);
        out += csv_line(header);
        for (const auto& row : grid.rows)
            out += csv_line(row);
        return out;
    }
    return render_template(builtin_template(Builtin::summary_text),
                           summary_view(grid, options.format), "reports/summary.txt.mustache");
}

} // namespace rig::report
