// SPDX-License-Identifier: MIT
// A watch's history read from the database, and its dashboard.
#include "watch/history.hpp"

#include "bisect/verdict.hpp"
#include "core/stats.hpp"
#include "util/file.hpp"
#include "watch/detect.hpp"
#include "watch/samples.hpp"
#include "watch/watch.hpp"

#include <algorithm>
#include <map>

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

report::TrendPoint point_of(const bisect::Criterion& figure,
                            const std::vector<core::Sample>& samples) {
    std::vector<double> measured = values(figure, samples);
    if (measured.empty())
        return {};
    return {core::summarize(measured).median, measured.size()};
}

} // namespace

Expected<report::History> load_history(const core::Scenario& scenario, store::Database& db) {
    if (!scenario.watch)
        return fail(ErrorKind::usage, scenario.file + ": the scenario has no watch: section");
    report::History history;
    history.watch = watch_name(scenario);
    history.heads = RIG_TRY(db.watch_heads(history.watch));
    history.regressions = RIG_TRY(db.watch_regressions(history.watch));
    const std::vector<bisect::Criterion> figures = figures_of(scenario);
    // A trend per cell key and figure, in the order cells first appear.
    std::map<std::pair<std::string, size_t>, size_t> trend_of;
    for (size_t h = 0; h < history.heads.size(); ++h) {
        const store::WatchHead& head = history.heads[h];
        if (head.run_id == 0)
            continue;
        RunSamples run = RIG_TRY(samples_of_run(db, head.run_id));
        for (const auto& [key, samples] : run.by_key)
            for (size_t f = 0; f < figures.size(); ++f) {
                auto [at, added] = trend_of.try_emplace({key, f}, history.trends.size());
                if (added) {
                    const bool duration = figures[f].kind == bisect::CriterionKind::duration;
                    history.trends.push_back(report::Trend{
                        key, run.cells[key].label(), duration ? "duration" : figures[f].metric,
                        duration ? "s" : "",
                        std::vector<report::TrendPoint>(history.heads.size())});
                }
                history.trends[at->second].points[h] = point_of(figures[f], samples);
            }
    }
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
