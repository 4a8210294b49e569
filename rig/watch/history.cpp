// SPDX-License-Identifier: MIT
// A watch's history read from the database, and its dashboard.
#include "watch/history.hpp"

#include "bisect/verdict.hpp"
#include "core/stats.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"
#include "watch/detect.hpp"
#include "watch/watch.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace rig::watch {

namespace fs = std::filesystem;

namespace {

// The figures a history draws: the watch's duration and metric criteria, else the duration.
std::vector<bisect::Criterion> figures_of(const core::Scenario& scenario) {
    std::vector<bisect::Criterion> out;
    for (const core::Located& text : scenario.watch->criteria)
        if (auto parsed = bisect::parse_criterion(text.value);
            parsed && (parsed->kind == bisect::CriterionKind::duration ||
                       parsed->kind == bisect::CriterionKind::metric))
            out.push_back(*parsed);
    if (out.empty())
        out.push_back(*bisect::parse_criterion("duration"));
    return out;
}

// What the database keeps per cell of the figures a history draws (store::FigureSelection).
store::FigureSelection selection_of(const std::vector<bisect::Criterion>& figures) {
    store::FigureSelection out;
    out.timed.clear();
    for (const bisect::Criterion& figure : figures) {
        if (figure.kind == bisect::CriterionKind::duration)
            out.timed = {core::Figure::duration};
        else
            out.metric_prefixes.push_back(figure.metric);
    }
    return out;
}

// Which figure of the history a stored value is; none for a metric that only shares a
// watched one's prefix.
std::optional<size_t> figure_index(const std::vector<bisect::Criterion>& figures,
                                   const store::FigureCount& row) {
    for (size_t f = 0; f < figures.size(); ++f) {
        const bool duration = figures[f].kind == bisect::CriterionKind::duration;
        if (duration ? row.figure == core::Figure::duration
                     : row.figure == core::Figure::metric && row.name == figures[f].metric)
            return f;
    }
    return std::nullopt;
}

} // namespace

Expected<report::History> load_history(const core::Scenario& scenario, store::Database& db,
                                       const std::vector<std::string>& cells) {
    if (!scenario.watch)
        return fail(ErrorKind::usage, scenario.file + ": the scenario has no watch: section");
    for (const std::string& filter : cells)
        RIG_TRY(core::cell_matches(core::Cell{}, filter));
    report::History history;
    history.watch = watch_name(scenario);
    history.heads = RIG_TRY(db.watch_heads(history.watch));
    history.regressions = RIG_TRY(db.watch_regressions(history.watch));
    const std::vector<bisect::Criterion> figures = figures_of(scenario);
    const store::FigureSelection selection = selection_of(figures);
    // A trend per cell key and figure, in the order cells first appear. Each point is the
    // median of the head's measured samples, read from the database's per-cell values
    // (core::figure_values: the values the watch's screen compares), not from its samples.
    std::map<std::pair<std::string, size_t>, size_t> trend_of;
    for (size_t h = 0; h < history.heads.size(); ++h) {
        const int64_t run = history.heads[h].run_id;
        if (run == 0)
            continue;
        std::set<std::string> sampled;
        RIG_TRY(db.outcome_tallies(
            {run}, [&](const store::OutcomeTally& tally) { sampled.insert(tally.cell_id); }));
        std::map<std::string, const core::Cell*> by_key; // the run's cells in key order
        std::map<std::string, std::string> key_of;
        const std::vector<core::Cell> run_cells = RIG_TRY(db.cells(run));
        for (const core::Cell& cell : run_cells)
            if (sampled.count(cell.id) && core::cell_matches_any(cell, cells)) {
                by_key.emplace(cell.key, &cell);
                key_of[cell.id] = cell.key;
            }
        std::map<std::pair<std::string, size_t>, core::Distribution> values;
        auto take = [&](const store::FigureCount& row) {
            auto key = key_of.find(row.cell_id);
            auto f = figure_index(figures, row);
            if (key != key_of.end() && f)
                values[{key->second, *f}].add(row.value, static_cast<size_t>(row.count));
        };
        if (cells.empty()) {
            RIG_TRY(db.figure_counts({run}, selection, take));
        } else {
            for (const auto& [key, cell] : by_key) {
                store::FigureSelection one = selection;
                one.cell_id = cell->id;
                RIG_TRY(db.figure_counts({run}, one, take));
            }
        }
        for (const auto& [key, cell] : by_key)
            for (size_t f = 0; f < figures.size(); ++f) {
                auto [at, added] = trend_of.try_emplace({key, f}, history.trends.size());
                if (added) {
                    const bool duration = figures[f].kind == bisect::CriterionKind::duration;
                    history.trends.push_back(
                        report::Trend{key, cell->label(), duration ? "duration" : figures[f].metric,
                                      duration ? "s" : "",
                                      std::vector<report::TrendPoint>(history.heads.size())});
                }
                auto found = values.find({key, f});
                if (found != values.end())
                    history.trends[at->second].points[h] = {core::summarize(found->second).median,
                                                            found->second.size()};
            }
    }
    if (!cells.empty() && history.trends.empty())
        return fail(ErrorKind::usage, "no cell '" + util::join(cells, "' or '") +
                                          "' in the runs of " + history.watch + "'s heads");
    return history;
}

fs::path dashboard_folder(const core::Scenario& scenario) {
    if (!scenario.watch || scenario.watch->dashboard.empty())
        return {};
    fs::path folder = scenario.watch->dashboard;
    return folder.is_absolute() ? folder : fs::path(scenario.dir) / folder;
}

Expected<void> write_dashboard(const core::Scenario& scenario, store::Database& db) {
    const fs::path folder = dashboard_folder(scenario);
    if (folder.empty())
        return {};
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + folder.string() + ": " + ec.message());
    report::History history = RIG_TRY(load_history(scenario, db));
    std::string page = RIG_TRY(report::history_html(history, fs::absolute(folder)));
    return util::write_file_atomically(folder / "index.html", page);
}

} // namespace rig::watch
