// SPDX-License-Identifier: MIT
// The views of the report templates, and their rendering.
#include "report/views.hpp"

#include "report/cells.hpp"
#include "report/html.hpp"
#include "report/json.hpp"
#include "report/template.hpp"
#include "util/file.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

#include <filesystem>

namespace rig::report {

using util::Json;

namespace {

// reports/table.txt.mustache's view. The widths need every row, so the lines come
// padded and the template only places them.
Json table_view(const Grid& grid, Format format) {
    Table table = table_of(grid);
    TableLines lines = format == Format::markdown ? table.markdown_lines() : table.text_lines();
    Json view{{"header", lines.header}, {"rows", lines.rows}};
    // Absent, not "": an empty string would still open the template's {{#rule}}.
    if (!lines.rule.empty())
        view["rule"] = lines.rule;
    return view;
}

Expected<std::string> table_text(const Grid& grid, Format format) {
    return render_template(builtin_template(Builtin::table_text), table_view(grid, format),
                           "reports/table.txt.mustache");
}

// reports/summary.txt.mustache's view.
Json summary_view(const Grid& grid, const std::string& table) {
    return {{"table", table}, {"notes", grid.notes}, {"has_notes", !grid.notes.empty()}};
}

// reports/page.html.mustache's view.
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

} // namespace

Expected<std::string> summary_text(const Grid& grid, Format format) {
    std::string table = RIG_TRY(table_text(grid, format));
    return render_template(builtin_template(Builtin::summary_text), summary_view(grid, table),
                           "reports/summary.txt.mustache");
}

Expected<std::string> html_page(const ReportData& data, const std::vector<Comparison>& comparisons,
                                const RenderOptions& options) {
    return render_template(builtin_template(Builtin::page_html),
                           RIG_TRY(page_view(data, comparisons, options)),
                           "reports/page.html.mustache");
}

// The page's view, the summary's as text and as markdown, and the JSON report's runs and
// cells, so that a user's template can draw on any of them.
Expected<std::string> user_template(const ReportData& data,
                                    const std::vector<Comparison>& comparisons,
                                    const RenderOptions& options) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(options.template_file, ec))
        return fail(ErrorKind::usage, "no template file " + options.template_file.string());
    Json view = RIG_TRY(page_view(data, comparisons, options));
    auto grid = RIG_TRY(results_grid(data, comparisons, options));
    view.update(summary_view(grid, RIG_TRY(table_text(grid, Format::text))));
    view["table_markdown"] = RIG_TRY(table_text(grid, Format::markdown));
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

} // namespace rig::report
