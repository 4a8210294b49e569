// SPDX-License-Identifier: MIT
// The one report renderer: the 9p cache/msize table (after Schoenebeck's), its baseline comparison
// and pivot, and the error signatures, as plain text, markdown, CSV, JSON or a self-contained HTML
// page. `rig run`, `rig report` and the bisect report all print through it.
#pragma once

#include "core/significance.hpp"
#include "report/compare.hpp"
#include "report/data.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rig::report {

enum class Format { text, markdown, csv, json, html };
// The results table (with a baseline, followed by each compared cell's "what changed"
// block: report/changes.hpp), or the error signatures (`rig report --errors`). HTML shows both.
enum class View { table, errors };

struct RenderOptions {
    Format format = Format::text;
    View view = View::table;
    std::optional<Baseline> baseline;
    core::Test test = core::Test::welch;
    double alpha = 0.05;
    std::vector<std::string> rows; // pivot: keys down the side (cache, msize)
    std::vector<std::string> cols; // pivot: keys across the top (kernel)
    std::string title;             // HTML <title> and heading; "" = from the runs
    // Metrics shown (median and n) instead of the automatic 9p counter columns; the
    // baseline and the pivot use the first instead of the duration.
    std::vector<std::string> metrics;
    // A user's mustache template rendered instead of `format` (reports/README.md).
    std::filesystem::path template_file;
};

// The metrics a render with these options shows, so that a caller reads no others.
MetricsRead metrics_shown(const RenderOptions& options);

// A usage error for an unknown key, a baseline no cell has, an ambiguous pivot or a
// metric no cell has.
Expected<std::string> render(const ReportData& data, const RenderOptions& options);

// "quickstart, run 3 (finished, started ...)" per run, each followed by the Debian
// packages its kernels resolved to: what text, markdown and HTML reports open with.
std::string runs_heading(const ReportData& data);

// mmtests' way of marking a gain: "(  5.12%)" when not significant, "*  5.12%*" when it is.
std::string mark_gain(double gain_percent, bool significant);

} // namespace rig::report
