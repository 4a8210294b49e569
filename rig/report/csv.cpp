// SPDX-License-Identifier: MIT
// The results as CSV.
#include "report/csv.hpp"

#include "report/cells.hpp"
#include "report/metrics.hpp"

#include <fmt/format.h>

namespace rig::report {

namespace {

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

// Shortest text that reads back as the same double; "" for an absent value.
std::string number(double value) {
    return fmt::format("{}", value);
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

std::vector<std::string> csv_header(const std::vector<std::string>& extras,
                                    const std::vector<std::string>& metric_list,
                                    const RenderOptions& options) {
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
    return header;
}

} // namespace

std::string csv_line(const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i)
        line += (i ? "," : "") + csv_field(fields[i]);
    return line + "\n";
}

std::string csv_table(const ReportData& data, const std::vector<Comparison>& comparisons,
                      const RenderOptions& options) {
    auto extras = extra_axes(data);
    auto metric_list = metric_names(data);
    const std::string compared = compared_metric(options);
    std::string out = csv_line(csv_header(extras, metric_list, options));
    for (size_t i = 0; i < data.cells.size(); ++i) {
        const CellResult& result = data.cells[i];
        const core::Summary& d = result.duration;
        auto ci = core::mean_ci(d);
        auto measured = [&](double value) { return d.n > 0 ? number(value) : std::string(); };
        auto requested = result.cell.msize();
        std::vector<std::string> row{
            case_name(i),
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

std::string grid_csv(const Grid& grid) {
    std::vector<std::string> header;
    for (const auto& column : grid.columns)
        header.push_back(column.title);
    std::string out = csv_line(header);
    for (const auto& row : grid.rows)
        out += csv_line(row);
    return out;
}

} // namespace rig::report
