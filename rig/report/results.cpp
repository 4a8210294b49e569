// SPDX-License-Identifier: MIT
// The results table.
#include "report/results.hpp"

#include "core/stats.hpp"
#include "report/table.hpp"

#include <cmath>
#include <fmt/format.h>
#include <map>

namespace rig::report {

namespace {

bool measured(core::Outcome outcome) {
    // A compile that finished with error lines still has a meaningful duration, as in
    // seed 004's "several errors (compilation completed)".
    return outcome == core::Outcome::ok || outcome == core::Outcome::errors;
}

std::string case_label(size_t index) {
    std::string label;
    for (size_t n = index + 1; n > 0; n = (n - 1) / 26)
        label.insert(label.begin(), static_cast<char>('A' + (n - 1) % 26));
    return label + ")";
}

std::string msize_text(const core::Cell& cell, const std::vector<const core::Sample*>& samples) {
    auto requested = cell.msize();
    if (!requested)
        return "-";
    std::string text = std::to_string(*requested);
    for (const core::Sample* sample : samples)
        if (sample->msize_negotiated && *sample->msize_negotiated != *requested)
            return text + "→" + std::to_string(*sample->msize_negotiated);
    return text;
}

std::string cache_text(const core::Cell& cell, const std::vector<const core::Sample*>& samples) {
    std::string requested = cell.cache().empty() ? "default" : cell.cache();
    for (const core::Sample* sample : samples)
        if (!sample->cache_negotiated.empty() && sample->cache_negotiated != requested &&
            !cell.cache().empty())
            return requested + "→" + sample->cache_negotiated;
    return requested;
}

std::string duration_text(const std::vector<const core::Sample*>& samples) {
    std::vector<double> seconds;
    for (const core::Sample* sample : samples)
        if (measured(sample->outcome) && sample->guest_seconds > 0)
            seconds.push_back(sample->guest_seconds);
    if (seconds.empty())
        return "-";
    core::Summary summary = core::summarize(seconds);
    if (summary.n == 1)
        return format_seconds(summary.median) + " (n=1)";
    return format_seconds(summary.median) + " [" + format_seconds(summary.q1) + "–" +
           format_seconds(summary.q3) + "] n=" + std::to_string(summary.n);
}

std::string cpu_text(const std::vector<const core::Sample*>& samples) {
    std::vector<double> percent;
    for (const core::Sample* sample : samples)
        if (measured(sample->outcome) && sample->wall_seconds > 0)
            percent.push_back(sample->host_cpu_percent);
    if (percent.empty())
        return "-";
    return fmt::format("~{:.0f}%", core::summarize(percent).median);
}

std::string errors_text(const std::vector<const core::Sample*>& samples) {
    int errors = 0, warnings = 0, with_errors = 0;
    for (const core::Sample* sample : samples) {
        errors += sample->error_count;
        warnings += sample->warning_count;
        with_errors += sample->error_count > 0;
    }
    if (errors == 0 && warnings == 0)
        return "none";
    std::string text;
    if (errors > 0)
        text = fmt::format("{} error{} in {}/{}", errors, errors == 1 ? "" : "s", with_errors,
                           samples.size());
    if (warnings > 0)
        text += fmt::format("{}{} warning{}", text.empty() ? "" : ", ", warnings,
                            warnings == 1 ? "" : "s");
    return text;
}

std::string outcomes_text(const std::vector<const core::Sample*>& samples) {
    std::map<std::string, int> counts;
    for (const core::Sample* sample : samples)
        counts[std::string(core::to_string(sample->outcome))]++;
    std::string text;
    for (const auto& [outcome, count] : counts)
        text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + outcome;
    return text.empty() ? "no samples" : text;
}

} // namespace

std::string format_seconds(double seconds) {
    if (seconds < 59.95) // above, "{:.1f}" would print 60.0s
        return fmt::format("{:.1f}s", seconds);
    long total = std::lround(seconds);
    if (total < 3600)
        return fmt::format("{}m {}s", total / 60, total % 60);
    return fmt::format("{}h {}m", total / 3600, total % 3600 / 60);
}

std::string render_results(const std::vector<core::Cell>& cells,
                           const std::vector<core::Sample>& samples) {
    std::map<std::string, std::vector<const core::Sample*>> by_cell;
    for (const core::Sample& sample : samples)
        by_cell[sample.cell_id].push_back(&sample);
    Table table({{"case"},
                 {"kernel"},
                 {"config"},
                 {"fs"},
                 {"msize", Align::right},
                 {"cache"},
                 {"duration (median [IQR])"},
                 {"host cpu", Align::right},
                 {"errors/warnings"},
                 {"outcomes"}});
    for (size_t i = 0; i < cells.size(); ++i) {
        const core::Cell& cell = cells[i];
        const auto& mine = by_cell[cell.id];
        table.add_row({case_label(i), cell.kernel_name, cell.config, cell.param("fs"),
                       msize_text(cell, mine), cache_text(cell, mine), duration_text(mine),
                       cpu_text(mine), errors_text(mine), outcomes_text(mine)});
    }
    return table.to_text();
}

} // namespace rig::report
