// SPDX-License-Identifier: MIT
// The report renderer: picks the form the options ask for; each form has its own file.
#include "report/render.hpp"

#include "report/cells.hpp"
#include "report/changes.hpp"
#include "report/csv.hpp"
#include "report/errors.hpp"
#include "report/grid.hpp"
#include "report/json.hpp"
#include "report/metrics.hpp"
#include "report/views.hpp"
#include "util/strings.hpp"

#include <cmath>
#include <fmt/format.h>

namespace rig::report {

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

std::string mark_gain(double gain_percent, bool significant) {
    // "-0.00%" reads as a change in the wrong direction.
    if (std::fabs(gain_percent) < 0.005)
        gain_percent = 0;
    return significant ? fmt::format("*{:7.2f}%*", gain_percent)
                       : fmt::format("({:7.2f}%)", gain_percent);
}

MetricsRead metrics_shown(const RenderOptions& options) {
    if (!options.template_file.empty())
        return MetricsRead::all;
    if (options.format == Format::csv || options.format == Format::json)
        return options.view == View::errors ? MetricsRead::none : MetricsRead::all;
    // A comparison's "what changed" block looks at every metric.
    if (options.format == Format::html || options.baseline)
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
        return user_template(data, comparisons, options);
    if (options.format == Format::html)
        return html_page(data, comparisons, options);
    if (options.format == Format::json)
        return json_report(data, comparisons, options);
    if (options.view == View::errors)
        return options.format == Format::csv ? signatures_csv(data)
                                             : signatures_text(data, options.format);

    const bool pivoted = !options.rows.empty() || !options.cols.empty();
    if (options.format == Format::csv && !pivoted)
        return csv_table(data, comparisons, options);
    auto grid = RIG_TRY(results_grid(data, comparisons, options));
    if (options.format == Format::csv)
        return grid_csv(grid);
    std::string out = RIG_TRY(summary_text(grid, options.format));
    if (!pivoted)
        if (std::string coherency = coherency_text(data, options.format); !coherency.empty())
            out += "\n" + coherency;
    // A block per cell that changed; one line for those that did not, as a matrix has many.
    std::vector<std::string> unchanged;
    for (const auto& changes : changes_of(data, comparisons, options.alpha)) {
        if (changes.set.changes.empty())
            unchanged.push_back(case_label(changes.cell));
        else
            out += "\n" +
                   changes_text(changes.set, changes.heading, options.format == Format::markdown);
    }
    if (!unchanged.empty())
        out += "\nnothing changed significantly in " + util::join(unchanged, ", ") +
               " against the baseline.\n";
    return out;
}

} // namespace rig::report
