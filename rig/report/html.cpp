// SPDX-License-Identifier: MIT
// The HTML report's parts: SVG charts and tables (the page around them is
// reports/page.html.mustache).
#include "report/html.hpp"

#include "report/cells.hpp"
#include "report/changes.hpp"
#include "report/coherency.hpp"
#include "report/grid.hpp"
#include "report/metrics.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace rig::report {

namespace {

// Chart geometry in SVG user units: a column per cell, labels below, a value axis left.
constexpr double k_column = 44;
constexpr double k_left = 56;
constexpr double k_top = 16;
constexpr double k_plot_height = 180;
constexpr double k_bottom = 28;

struct Chart {
    std::string id;
    std::string caption;
    std::string unit;
    double max = 0;
    size_t columns = 0;
    std::string body;

    double width() const { return k_left + k_column * static_cast<double>(columns) + 8; }
    double y(double value) const {
        return k_top + k_plot_height - (max > 0 ? value / max * k_plot_height : 0);
    }
    double x(size_t column) const { return k_left + k_column * static_cast<double>(column); }
};

std::string frame(const Chart& chart, const ReportData& data) {
    std::string out = fmt::format(
        "<figure><figcaption>{}</figcaption>\n<svg id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" "
        "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
        escape_html(chart.caption), chart.id, svg_number(chart.width()),
        svg_number(k_top + k_plot_height + k_bottom), svg_number(chart.width()),
        svg_number(k_top + k_plot_height + k_bottom), escape_html(chart.caption));
    for (int tick = 0; tick <= 4; ++tick) {
        double value = chart.max * tick / 4;
        double y = chart.y(value);
        out += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
                           "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}{}</text>\n",
                           svg_number(k_left), svg_number(y), svg_number(chart.width() - 8),
                           svg_number(y), svg_number(k_left - 6), svg_number(y + 4),
                           fmt::format("{:g}", value), chart.unit);
    }
    out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n",
                       svg_number(k_left), svg_number(k_top), svg_number(k_top + k_plot_height));
    for (size_t i = 0; i < data.cells.size(); ++i)
        out += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" "
                           "text-anchor=\"middle\">{}</text>\n",
                           svg_number(chart.x(i) + k_column / 2),
                           svg_number(k_top + k_plot_height + 16), case_name(i));
    return out + chart.body + "</svg></figure>\n";
}

std::string duration_chart(const ReportData& data) {
    Chart chart{"chart-duration",
                "Duration per cell: median, IQR (bar), min-max (whisker)",
                "s",
                0,
                data.cells.size(),
                {}};
    for (const auto& result : data.cells)
        chart.max = std::max(chart.max, result.duration.max);
    chart.max = nice_max(chart.max);
    for (size_t i = 0; i < data.cells.size(); ++i) {
        const core::Summary& d = data.cells[i].duration;
        if (d.n == 0)
            continue;
        double mid = chart.x(i) + k_column / 2;
        chart.body += fmt::format(
            "<g class=\"cell\" data-case=\"{}\"><title>{}: median {}, IQR {}–{}, min {}, max {}, "
            "n={}</title>"
            "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
            "<line class=\"whisker\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
            "<circle class=\"median\" cx=\"{}\" cy=\"{}\" r=\"3\"/></g>\n",
            case_name(i), escape_html(case_label(i)),
            util::format_duration(d.median, util::DurationStyle::report),
            util::format_duration(d.q1, util::DurationStyle::report),
            util::format_duration(d.q3, util::DurationStyle::report),
            util::format_duration(d.min, util::DurationStyle::report),
            util::format_duration(d.max, util::DurationStyle::report), d.n, svg_number(mid - 10),
            svg_number(chart.y(d.q3)), svg_number(20),
            svg_number(std::max(1.0, chart.y(d.q1) - chart.y(d.q3))), svg_number(mid),
            svg_number(chart.y(d.max)), svg_number(mid), svg_number(chart.y(d.min)),
            svg_number(mid), svg_number(chart.y(d.median)));
    }
    return frame(chart, data);
}

std::string cpu_chart(const ReportData& data) {
    Chart chart{"chart-cpu",
                "Host CPU over the workload (median, % of all host CPUs)",
                "%",
                0,
                data.cells.size(),
                {}};
    chart.max = 100;
    for (size_t i = 0; i < data.cells.size(); ++i) {
        const core::Summary& cpu = data.cells[i].cpu;
        if (cpu.n == 0)
            continue;
        double top = chart.y(std::min(cpu.median, 100.0));
        chart.body += fmt::format("<g class=\"cell\" data-case=\"{}\"><title>{}: ~{:.0f}%, "
                                  "n={}</title><rect class=\"cpu\" x=\"{}\" y=\"{}\" "
                                  "width=\"24\" height=\"{}\"/></g>\n",
                                  case_name(i), escape_html(case_label(i)), cpu.median, cpu.n,
                                  svg_number(chart.x(i) + k_column / 2 - 12), svg_number(top),
                                  svg_number(k_top + k_plot_height - top));
    }
    return frame(chart, data);
}

std::string errors_chart(const ReportData& data) {
    Chart chart{"chart-errors",
                "Error (red) and warning (orange) lines per cell",
                "",
                0,
                data.cells.size(),
                {}};
    for (const auto& result : data.cells)
        chart.max =
            std::max(chart.max, static_cast<double>(std::max(result.errors, result.warnings)));
    chart.max = nice_max(chart.max);
    for (size_t i = 0; i < data.cells.size(); ++i) {
        const CellResult& result = data.cells[i];
        double x = chart.x(i) + k_column / 2 - 12;
        double errors_top = chart.y(result.errors);
        double warnings_top = chart.y(result.warnings);
        chart.body += fmt::format(
            "<g class=\"cell\" data-case=\"{}\"><title>{}: {} errors, {} warnings</title>"
            "<rect class=\"errors\" x=\"{}\" y=\"{}\" width=\"12\" height=\"{}\"/>"
            "<rect class=\"warnings\" x=\"{}\" y=\"{}\" width=\"12\" height=\"{}\"/></g>\n",
            case_name(i), escape_html(case_label(i)), result.errors, result.warnings, svg_number(x),
            svg_number(errors_top), svg_number(k_top + k_plot_height - errors_top),
            svg_number(x + 12), svg_number(warnings_top),
            svg_number(k_top + k_plot_height - warnings_top));
    }
    return frame(chart, data);
}

std::string table_html(const Grid& grid, std::string_view id) {
    std::string out = fmt::format("<table id=\"{}\">\n<thead><tr>", id);
    for (const auto& column : grid.columns)
        out += fmt::format("<th{}>{}</th>", column.align == Align::right ? " class=\"num\"" : "",
                           escape_html(column.title));
    out += "</tr></thead>\n<tbody>\n";
    for (size_t r = 0; r < grid.rows.size(); ++r) {
        out += r < grid.cells.size()
                   ? fmt::format("<tr data-case=\"{}\">", case_name(grid.cells[r]))
                   : std::string("<tr>");
        for (size_t c = 0; c < grid.rows[r].size(); ++c)
            out += fmt::format("<td{}>{}</td>",
                               grid.columns[c].align == Align::right ? " class=\"num\"" : "",
                               escape_html(grid.rows[r][c]));
        out += "</tr>\n";
    }
    out += "</tbody></table>\n";
    for (const auto& note : grid.notes)
        out += "<p class=\"notes\">" + escape_html(note) + "</p>\n";
    return out;
}

// The coherency table (report/coherency.hpp), when a cell ran the probe.
std::string coherency_html(const ReportData& data) {
    Grid grid = coherency_grid(data);
    if (grid.rows.empty())
        return {};
    return "<h2>Coherency</h2>\n<p>" + escape_html(k_coherency_heading) + "</p>\n" +
           table_html(grid, "coherency");
}

// Every metric of every case, collapsed: a report of real samples carries dozens.
std::string metrics_html(const ReportData& data) {
    auto names = metric_names(data);
    if (names.empty())
        return {};
    std::string out = fmt::format(
        "<h2>Metrics</h2>\n<details id=\"metrics\"><summary>{} metrics per case: the median "
        "of the measured samples that have it (mean, sd and n in its tooltip); n/a when none "
        "has it</summary>\n<table>\n<thead><tr><th>metric</th><th>unit</th>",
        names.size());
    for (size_t i = 0; i < data.cells.size(); ++i)
        out += fmt::format("<th class=\"num\">{}</th>", case_name(i));
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& name : names) {
        out += fmt::format("<tr><td>{}</td><td>{}</td>", escape_html(name),
                           escape_html(metric_unit(data, name)));
        for (const CellResult& result : data.cells) {
            const MetricValues* values = find_metric(result, name);
            if (!values) {
                out += "<td class=\"num\">n/a</td>";
                continue;
            }
            const core::Summary& s = values->summary;
            out += fmt::format("<td class=\"num\" title=\"mean {}, sd {}, n={}\">{}</td>",
                               metric_text(s.mean), s.n > 1 ? metric_text(s.stddev) : "-", s.n,
                               metric_text(s.median));
        }
        out += "</tr>\n";
    }
    return out + "</tbody></table>\n</details>\n";
}

// Each compared cell's "what changed" block, as a list per group.
std::string changes_html(const ReportData& data, const std::vector<Comparison>& comparisons,
                         const RenderOptions& options) {
    std::string out;
    for (const auto& changes : changes_of(data, comparisons, options.alpha)) {
        out += fmt::format("<section class=\"changes\" data-case=\"{}\"><h3>{}</h3>\n",
                           case_name(changes.cell), escape_html(changes.heading));
        out += fmt::format("<p>{}{}</p>\n", counted_text(changes.set),
                           changes.set.changes.empty() ? "; nothing changed significantly" : "");
        std::string group;
        for (const auto& change : changes.set.changes) {
            if (change.group != group) {
                out += group.empty() ? "" : "</ul>\n";
                group = change.group;
                out += fmt::format("<h4>{}</h4>\n<ul>\n", escape_html(group));
            }
            out += "<li>" + escape_html(change_line(change)) + "</li>\n";
        }
        out += group.empty() ? "</section>\n" : "</ul>\n</section>\n";
    }
    return out.empty() ? out : "<h2>What changed</h2>\n" + out;
}

std::string failures_html(const ReportData& data) {
    if (data.failures.empty())
        return "";
    std::string out = "<section class=\"failures\"><h3>Failed without an error line</h3>\n"
                      "<table><thead><tr><th>case</th><th>cell</th><th>outcome</th><th "
                      "class=\"num\">samples</th><th>last output of the first</th></tr>"
                      "</thead><tbody>\n";
    for (const Failure& failure : data.failures)
        out += fmt::format("<tr data-case=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td "
                           "class=\"num\">{}/{}</td><td>sample #{}<pre>{}</pre></td></tr>\n",
                           case_name(failure.cell), escape_html(describe_cell(data, failure.cell)),
                           escape_html(data.cells[failure.cell].cell.id),
                           core::to_string(failure.outcome), failure.samples,
                           data.cells[failure.cell].samples, failure.repetition,
                           escape_html(util::join(failure.last_output, "\n")));
    return out + "</tbody></table></section>\n";
}

std::string signatures_html(const ReportData& data) {
    if (data.signatures.empty())
        return "<div id=\"errors\"><p>No error or warning lines in the selected cells.</p>\n" +
               failures_html(data) + "</div>\n";
    std::string out = "<div id=\"errors\">\n";
    for (const auto& group : data.signatures) {
        const char* severity = group.severity == core::Severity::error ? "error" : "warning";
        out += fmt::format("<section class=\"signature-group {}\"><h3>{}: <span "
                           "class=\"signature\">{}</span></h3>\n<p>{} lines in {} samples</p>\n"
                           "<table><thead><tr><th>case</th><th>cell</th><th class=\"num\">lines"
                           "</th><th class=\"num\">samples</th><th>first occurrence</th></tr>"
                           "</thead><tbody>\n",
                           severity, severity, escape_html(group.signature), group.lines,
                           group.samples);
        for (const auto& occurrence : group.cells) {
            const CellResult& result = data.cells[occurrence.cell];
            out += fmt::format("<tr data-case=\"{}\"><td>{}</td><td>{}</td><td class=\"num\">{}"
                               "</td><td class=\"num\">{}/{}</td><td>sample #{} ({})<pre>{}</pre>"
                               "</td></tr>\n",
                               case_name(occurrence.cell),
                               escape_html(describe_cell(data, occurrence.cell)),
                               escape_html(result.cell.id), occurrence.lines, occurrence.samples,
                               result.samples, occurrence.repetition,
                               escape_html(occurrence.source), escape_html(occurrence.excerpt));
        }
        out += "</tbody></table></section>\n";
    }
    return out + failures_html(data) + "</div>\n";
}

} // namespace

std::string escape_html(const std::string& text) {
    return util::escape(
        text, {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"}});
}

std::string svg_number(double value) {
    return fmt::format("{:.1f}", value);
}

double nice_max(double value) {
    if (value <= 0)
        return 1;
    double step = std::pow(10.0, std::floor(std::log10(value)));
    for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (factor * step >= value)
            return factor * step;
    return 10 * step;
}

std::string page_title(const ReportData& data, const RenderOptions& options) {
    if (!options.title.empty())
        return options.title;
    return data.runs.empty() ? "rig report" : "rig report: " + data.runs.front().scenario;
}

Expected<util::Json> html_parts(const ReportData& data, const std::vector<Comparison>& comparisons,
                                const RenderOptions& options) {
    auto grid = RIG_TRY(results_grid(data, comparisons, options));
    return util::Json{{"charts", duration_chart(data) + cpu_chart(data) + errors_chart(data)},
                      {"results", table_html(grid, "results")},
                      {"coherency", coherency_html(data)},
                      {"changes", changes_html(data, comparisons, options)},
                      {"metrics", metrics_html(data)},
                      {"errors", signatures_html(data)}};
}

} // namespace rig::report
