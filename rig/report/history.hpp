// SPDX-License-Identifier: MIT
// A watch's history as `rig report --history` and the watch's dashboard show it: the heads
// it tested with their verdicts, the regressions it reported, and each watched figure of
// each cell over those heads, as text tables or one self-contained HTML page (inline CSS
// and SVG trend charts, no scripts; reports/history.html.mustache). What goes in is read
// by watch/ (which knows the criteria and the cells); this only draws it.
#pragma once

#include "store/store.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rig::report {

struct TrendPoint {
    std::optional<double> value; // the median of the head's usable samples; none: no value
    size_t n = 0;                // how many samples it is the median of
};

// One watched figure of one cell: a point per head of History::heads, in their order.
struct Trend {
    std::string cell_key; // the cell across commits (core::Cell::key)
    std::string cell;     // its label
    std::string figure;   // "duration" or the metric's name
    std::string unit;     // "s" for a duration, "" for a count
    std::vector<TrendPoint> points;
};

struct History {
    std::string watch;
    std::vector<store::WatchHead> heads; // oldest first
    std::vector<store::WatchRegression> regressions;
    std::vector<Trend> trends;
};

// A table of the heads, one of the regressions, and one per trend (head, verdict, value, n,
// and what was found or fixed there).
std::string history_text(const History& history);

// The page. Links to the mails are relative to `page_folder`, the folder the page is
// written to, so that the folder (the watch's dashboard) can be served as it is.
Expected<std::string> history_html(const History& history,
                                   const std::filesystem::path& page_folder);

// One trend as an SVG figure: the heads along, its value up, the heads where a regression of
// its cell was found (red) or fixed (green) marked, each point titled with its head.
std::string trend_svg(const History& history, size_t trend);

} // namespace rig::report
