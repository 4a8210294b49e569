// SPDX-License-Identifier: MIT
// A watch's history: text tables, and the page with a trend chart per watched figure.
#include "report/history.hpp"

#include "report/html.hpp"
#include "report/table.hpp"
#include "report/template.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace rig::report {

namespace fs = std::filesystem;

namespace {

// Trend geometry in SVG user units: heads along, the value up.
constexpr double k_trend_left = 64;
constexpr double k_trend_top = 20;
constexpr double k_trend_height = 160;
constexpr double k_trend_bottom = 44;
constexpr double k_trend_right = 96; // room for the last marker's words

std::string head_sha(const std::string& sha) {
    return sha.substr(0, 12);
}

std::string value_text(const TrendPoint& point, const std::string& unit) {
    if (!point.value)
        return "-";
    return fmt::format("{:g}", *point.value) + (unit.empty() ? "" : " " + unit);
}

// What was found or fixed at head `commit` for the cell of `trend`: "found: culprit SHA
// (subject)", "fixed: culprit SHA", joined.
std::vector<std::string> marks_at(const History& history, const Trend& trend,
                                  const std::string& commit) {
    std::vector<std::string> marks;
    for (const store::WatchRegression& regression : history.regressions) {
        if (regression.cell_key != trend.cell_key)
            continue;
        if (regression.found_on == commit)
            marks.push_back("found " + regression.criterion + ": culprit " +
                            head_sha(regression.culprit));
        if (!regression.fixed_in.empty() && regression.fixed_in == commit)
            marks.push_back("fixed: culprit " + head_sha(regression.culprit));
    }
    return marks;
}

std::string link_to(const std::string& mail, const fs::path& page_folder) {
    if (mail.empty())
        return "";
    fs::path target(mail);
    if (!page_folder.empty() && target.is_absolute())
        target = target.lexically_relative(page_folder);
    return "<a href=\"" + escape_html(target.generic_string()) + "\">" +
           escape_html(fs::path(mail).filename().string()) + "</a>";
}

struct Rows {
    std::vector<Column> columns;
    std::vector<std::vector<std::string>> rows;

    Table table() const {
        Table table(columns);
        for (const auto& row : rows)
            table.add_row(row);
        return table;
    }
    // Cells are escaped, but for column `raw`, whose cells the caller gives as HTML.
    std::string html(const std::string& id, std::optional<size_t> raw = std::nullopt,
                     const std::vector<std::string>& raw_cells = {}) const {
        std::string out = "<table id=\"" + id + "\">\n<thead><tr>";
        for (const Column& column : columns)
            out +=
                fmt::format("<th{}>{}</th>", column.align == Align::right ? " class=\"num\"" : "",
                            escape_html(column.title));
        out += "</tr></thead>\n<tbody>\n";
        for (size_t r = 0; r < rows.size(); ++r) {
            out += "<tr>";
            for (size_t c = 0; c < rows[r].size(); ++c)
                out += fmt::format("<td{}>{}</td>",
                                   columns[c].align == Align::right ? " class=\"num\"" : "",
                                   raw && *raw == c ? raw_cells.at(r) : escape_html(rows[r][c]));
            out += "</tr>\n";
        }
        return out + "</tbody></table>\n";
    }
};

Rows heads_rows(const History& history) {
    Rows rows{{{"#", Align::right}, {"head"}, {"status"}, {"against"}, {"tested"}, {"note"}}, {}};
    for (size_t i = 0; i < history.heads.size(); ++i) {
        const store::WatchHead& head = history.heads[i];
        rows.rows.push_back({std::to_string(i + 1), head_sha(head.commit),
                             std::string(core::to_string(head.status)), head_sha(head.baseline),
                             head.updated_at, head.note});
    }
    return rows;
}

constexpr size_t k_mail_column = 6;

Rows regressions_rows(const History& history) {
    Rows rows{
        {{"culprit"}, {"status"}, {"criterion"}, {"subject"}, {"found on"}, {"fixed in"}, {"mail"}},
        {}};
    for (const store::WatchRegression& regression : history.regressions)
        rows.rows.push_back({head_sha(regression.culprit),
                             std::string(core::to_string(regression.status)), regression.criterion,
                             regression.subject, head_sha(regression.found_on),
                             head_sha(regression.fixed_in), regression.mail});
    return rows;
}

} // namespace

std::string history_text(const History& history) {
    std::string out = "watch " + history.watch + ": " + std::to_string(history.heads.size()) +
                      " heads, " + std::to_string(history.regressions.size()) +
                      " regressions reported\n\n" + heads_rows(history).table().to_text();
    if (!history.regressions.empty())
        out += "\nregressions:\n" + regressions_rows(history).table().to_text();
    for (const Trend& trend : history.trends) {
        Table table({{"#", Align::right},
                     {"head"},
                     {"status"},
                     {trend.figure, Align::right},
                     {"n", Align::right},
                     {"found or fixed here"}});
        for (size_t i = 0; i < history.heads.size() && i < trend.points.size(); ++i) {
            const store::WatchHead& head = history.heads[i];
            table.add_row({std::to_string(i + 1), head_sha(head.commit),
                           std::string(core::to_string(head.status)),
                           value_text(trend.points[i], trend.unit),
                           trend.points[i].n ? std::to_string(trend.points[i].n) : "",
                           util::join(marks_at(history, trend, head.commit), "; ")});
        }
        out += "\n" + trend.figure + " of " + trend.cell + ":\n" + table.to_text();
    }
    return out;
}

std::string trend_svg(const History& history, size_t index) {
    const Trend& trend = history.trends.at(index);
    const size_t n = std::min(history.heads.size(), trend.points.size());
    const double step = n > 1 ? std::clamp(640.0 / static_cast<double>(n - 1), 2.0, 48.0) : 0.0;
    const double width =
        k_trend_left + step * static_cast<double>(n > 1 ? n - 1 : 0) + k_trend_right;
    const double height = k_trend_top + k_trend_height + k_trend_bottom;
    double top = 0;
    for (const TrendPoint& point : trend.points)
        if (point.value)
            top = std::max(top, *point.value);
    top = nice_max(top);
    auto x = [&](size_t i) { return k_trend_left + step * static_cast<double>(i); };
    auto y = [&](double value) {
        return k_trend_top + k_trend_height - value / top * k_trend_height;
    };

    const std::string caption = trend.figure + " of " + trend.cell;
    std::string out = fmt::format(
        "<figure><figcaption>{}</figcaption>\n<svg id=\"trend-{}\" class=\"trend\" "
        "xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
        "role=\"img\" aria-label=\"{}\">\n",
        escape_html(caption), index, svg_number(width), svg_number(height), svg_number(width),
        svg_number(height), escape_html(caption));
    for (int tick = 0; tick <= 4; ++tick) {
        double value = top * tick / 4;
        out +=
            fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
                        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:g}{}</text>\n",
                        svg_number(k_trend_left), svg_number(y(value)),
                        svg_number(width - k_trend_right), svg_number(y(value)),
                        svg_number(k_trend_left - 6), svg_number(y(value) + 4), value, trend.unit);
    }
    out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n",
                       svg_number(k_trend_left), svg_number(k_trend_top),
                       svg_number(k_trend_top + k_trend_height));
    // Regressions found (red) and fixed (green) at a head, across the plot.
    for (size_t i = 0; i < n; ++i) {
        const std::string& commit = history.heads[i].commit;
        for (const store::WatchRegression& regression : history.regressions) {
            if (regression.cell_key != trend.cell_key)
                continue;
            for (const auto& [at, kind, words] :
                 {std::tuple{regression.found_on, "found",
                             "culprit " + head_sha(regression.culprit)},
                  std::tuple{regression.fixed_in, "fixed", std::string("fixed")}}) {
                if (at.empty() || at != commit)
                    continue;
                out += fmt::format("<g class=\"{}\" data-head=\"{}\"><title>{} {}: {} ({})</title>"
                                   "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
                                   "<text x=\"{}\" y=\"{}\">{}</text></g>\n",
                                   kind, head_sha(commit), kind, head_sha(commit),
                                   escape_html(words), escape_html(regression.criterion),
                                   svg_number(x(i)), svg_number(k_trend_top), svg_number(x(i)),
                                   svg_number(k_trend_top + k_trend_height), svg_number(x(i) + 3),
                                   svg_number(k_trend_top - 6), escape_html(words));
            }
        }
    }
    // The line, broken where a head has no value.
    std::string points;
    auto flush = [&] {
        if (!points.empty())
            out += "<polyline class=\"trend-line\" points=\"" + points + "\"/>\n";
        points.clear();
    };
    for (size_t i = 0; i < n; ++i) {
        if (!trend.points[i].value) {
            flush();
            continue;
        }
        points += (points.empty() ? "" : " ") + svg_number(x(i)) + "," +
                  svg_number(y(*trend.points[i].value));
    }
    flush();
    // A point per measured head, titled; labels below for some heads, so they never overlap.
    const size_t label_every = step > 0 ? static_cast<size_t>(std::ceil(84.0 / step)) : 1;
    for (size_t i = 0; i < n; ++i) {
        const store::WatchHead& head = history.heads[i];
        if (const TrendPoint& point = trend.points[i]; point.value)
            out += fmt::format("<circle class=\"point {}\" data-head=\"{}\" cx=\"{}\" cy=\"{}\" "
                               "r=\"3\"><title>{} ({}): {}, n={}</title></circle>\n",
                               core::to_string(head.status), head_sha(head.commit),
                               svg_number(x(i)), svg_number(y(*point.value)), head_sha(head.commit),
                               core::to_string(head.status),
                               escape_html(value_text(point, trend.unit)), point.n);
        if (i % label_every == 0 || i + 1 == n)
            out += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" "
                               "text-anchor=\"middle\">{}</text>\n",
                               svg_number(x(i)), svg_number(k_trend_top + k_trend_height + 16),
                               head.commit.substr(0, 7));
    }
    return out + "</svg></figure>\n";
}

Expected<std::string> history_html(const History& history, const fs::path& page_folder) {
    std::string heads = heads_rows(history).html("heads");
    std::string regressions = "<p class=\"notes\">none reported</p>\n";
    if (!history.regressions.empty()) {
        std::vector<std::string> links;
        for (const store::WatchRegression& regression : history.regressions)
            links.push_back(link_to(regression.mail, page_folder));
        regressions = regressions_rows(history).html("regressions", k_mail_column, links);
    }
    std::string charts;
    for (size_t i = 0; i < history.trends.size(); ++i)
        charts += trend_svg(history, i);
    if (charts.empty())
        charts = "<p class=\"notes\">no duration or metric is watched, and no head has a value "
                 "yet</p>\n";
    util::Json view = {
        {"title", "rig watch " + history.watch},
        {"style", builtin_template(Builtin::page_style)},
        {"summary", std::to_string(history.heads.size()) + " heads tested, " +
                        std::to_string(history.regressions.size()) + " regressions reported"},
        {"regressions", regressions},
        {"charts", charts},
        {"heads", heads},
    };
    return render_template(builtin_template(Builtin::history_html), view, "history page");
}

} // namespace rig::report
