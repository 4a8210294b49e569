// SPDX-License-Identifier: MIT
// `rig report`: select runs and cells, summarize, compare, and render in one format.
#include "cli/report.hpp"

#include "core/results_folder.hpp"
#include "report/load.hpp"
#include "report/render.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "watch/history.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>

namespace rig::cli {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> keys;
    size_t start = 0;
    while (start <= text.size() && !text.empty()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos)
            comma = text.size();
        if (comma > start)
            keys.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return keys;
}

Expected<std::pair<std::string, std::string>> parse_where(const std::string& text) {
    auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0)
        return fail(ErrorKind::usage,
                    "--where wants KEY=VALUE, for example cache=loose; got '" + text + "'");
    return std::make_pair(text.substr(0, equals), text.substr(equals + 1));
}

Expected<report::RenderOptions> render_options(const ReportCommandOptions& options) {
    report::RenderOptions render;
    render.format = options.format;
    render.view = options.view;
    if (!options.baseline.empty())
        render.baseline = RIG_TRY(report::parse_baseline(options.baseline));
    render.test = options.test;
    render.alpha = options.alpha;
    render.template_file = options.template_file;
    render.rows = split_list(options.rows);
    render.cols = split_list(options.cols);
    for (const auto& list : options.metrics)
        for (auto& metric : split_list(list))
            if (std::find(render.metrics.begin(), render.metrics.end(), metric) ==
                render.metrics.end())
                render.metrics.push_back(std::move(metric));
    return render;
}

// `--history FILE`: what `rig watch` found over time, as text or one page.
Expected<std::string> build_history(const GlobalOptions& global,
                                    const ReportCommandOptions& options) {
    if (options.format != report::Format::text && options.format != report::Format::html)
        return fail(ErrorKind::usage, "--history renders text or html");
    auto scenario = RIG_TRY(spec::load_scenario(options.history));
    auto db = RIG_TRY(store::Database::open(global.db, store::Access::existing));
    report::History history = RIG_TRY(watch::load_history(scenario, *db, options.cells));
    if (options.format == report::Format::text)
        return report::history_text(history);
    return report::history_html(history, options.output.empty()
                                             ? fs::current_path()
                                             : fs::absolute(options.output).parent_path());
}

Expected<std::string> build_report(const GlobalOptions& global,
                                   const ReportCommandOptions& options) {
    if (!options.history.empty())
        return build_history(global, options);
    auto render = RIG_TRY(render_options(options));
    report::Selection selection;
    selection.runs = options.runs;
    selection.cells = options.cells;
    for (const auto& kernel : options.kernels)
        selection.where.emplace_back("kernel", kernel);
    for (const auto& where : options.where)
        selection.where.push_back(RIG_TRY(parse_where(where)));
    const bool signatures = render.view == report::View::errors ||
                            render.format == report::Format::html || !render.template_file.empty();
    selection.signatures = signatures ? report::Signatures::load : report::Signatures::skip;
    selection.runs_dir =
        core::results_folder(global.db.parent_path().empty() ? "." : global.db.parent_path(),
                             global.db, core::Kept::runs);
    selection.metrics = report::metrics_shown(render);
    selection.chosen_metrics = render.metrics;
    // A typo in --db deserves a plain answer, not a new empty database.
    auto db = RIG_TRY(store::Database::open(global.db, store::Access::existing));
    auto data = RIG_TRY(report::load(*db, selection));
    std::string out;
    // Text and markdown say which runs they show; CSV, JSON, HTML and a user's template
    // carry it themselves.
    if (render.template_file.empty() &&
        (render.format == report::Format::text || render.format == report::Format::markdown)) {
        out += report::runs_heading(data) + "\n";
    }
    return out + RIG_TRY(report::render(data, render));
}

} // namespace

void add_report_options(CLI::App& command, ReportCommandOptions& options) {
    command.add_option("--run", options.runs, "run id, repeatable (default: the newest run)");
    command.add_option("--cell", options.cells,
                       "the cells: id or id prefix, or KEY=VALUE[,KEY=VALUE] on kernel, config "
                       "or an axis; repeatable, any of them");
    command.add_option("--kernel", options.kernels, "kernel name, repeatable");
    command.add_option("--where", options.where,
                       "KEY=VALUE on run, cell, kernel, config or an axis (fs, msize, cache, "
                       "...); repeatable, one key's values are alternatives");
    command.add_option("--baseline", options.baseline,
                       "KEY=VALUE: compare each cell with its twin that differs only in KEY, "
                       "for example kernel=deb-6.1");
    command
        .add_option("--test", options.test, "significance test: welch (default) or mann-whitney")
        ->transform(CLI::CheckedTransformer(test_words()));
    command.add_option("--alpha", options.alpha, "significance level (default 0.05)")
        ->check(CLI::Range(0.0, 1.0));
    command.add_option("--metric", options.metrics,
                       "NAME: show this metric's median and n instead of the 9p counter "
                       "columns, for example 9p.work.requests or noop/guest.cpu.system; "
                       "repeatable or comma-separated; --baseline and the pivot compare the "
                       "first instead of the duration");
    command.add_option("--rows", options.rows, "pivot: keys down the side, comma-separated");
    command.add_option("--cols", options.cols, "pivot: keys across the top, comma-separated");
    command.add_option("--format", options.format, "text, markdown, csv, json or html")
        ->transform(CLI::CheckedTransformer(report_format_words()));
    command.add_flag_callback(
        "--errors", [&options] { options.view = report::View::errors; },
        "error-line signatures with counts and the first occurrence per cell");
    command.add_option("--template", options.template_file,
                       "FILE: render this mustache template with the report's data instead of "
                       "--format (reports/README.md names the variables)");
    command.add_option("-o,--output", options.output, "write to FILE instead of stdout");
    command.add_option("--history", options.history,
                       "a watch's scenario: its heads, regressions and each watched figure per "
                       "cell over the heads (text, or html with SVG trend charts); with --cell, "
                       "only those cells'");
}

int report_command(const GlobalOptions& global, const ReportCommandOptions& options) {
    auto text = build_report(global, options);
    if (!text)
        return report_error(text.error());
    if (options.output.empty()) {
        std::cout << *text;
        return k_exit_ok;
    }
    std::ofstream out(options.output, std::ios::binary);
    out << *text;
    out.close();
    if (!out)
        return report_error(
            Error{ErrorKind::infra, "cannot write the report to " + options.output.string()});
    return k_exit_ok;
}

} // namespace rig::cli
