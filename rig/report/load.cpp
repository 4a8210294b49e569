// SPDX-License-Identifier: MIT
// Report data from the results database.
#include "report/load.hpp"

#include "report/metrics.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

namespace rig::report {

namespace {

Expected<std::vector<store::RunInfo>> selected_runs(store::Database& db,
                                                    const std::vector<int64_t>& ids) {
    std::vector<store::RunInfo> runs;
    if (ids.empty()) {
        auto all = RIG_TRY(db.runs());
        if (all.empty())
            return fail(ErrorKind::usage, "the database has no runs yet: `rig run` a scenario");
        runs.push_back(all.back());
        return runs;
    }
    std::set<int64_t> seen;
    for (int64_t id : ids) {
        if (!seen.insert(id).second)
            continue;
        auto run = RIG_TRY(db.run(id));
        if (!run)
            return fail(ErrorKind::usage, "no run " + std::to_string(id) + " in the database");
        runs.push_back(*run);
    }
    return runs;
}

Expected<void> check_keys(const std::vector<CellResult>& cells, const Selection& selection) {
    auto keys = known_keys(cells);
    for (const auto& [key, value] : selection.where)
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            return fail(ErrorKind::usage, "unknown key '" + key + "' in " + key + "=" + value +
                                              "; keys are " + util::join(keys, ", "));
    for (const auto& wanted : selection.cells) {
        bool found = false;
        for (const CellResult& result : cells)
            found = found || RIG_TRY(core::cell_matches(result.cell, wanted));
        if (!found)
            return fail(ErrorKind::usage, "no cell '" + wanted + "' in the selected runs");
    }
    return {};
}

bool selected(const CellResult& result, const Selection& selection) {
    // check_keys has refused a filter that is not well formed.
    if (!core::cell_matches_any(result.cell, selection.cells))
        return false;
    // Values of one key are alternatives; different keys must all match.
    std::map<std::string, bool> matched;
    for (const auto& [key, value] : selection.where)
        matched[key] = matched[key] || key_value(result, key) == value;
    return std::all_of(matched.begin(), matched.end(), [](const auto& m) { return m.second; });
}

// The stored evidence holds the tail of the log that explains the outcome; an earlier
// line is found in the sample's console log when it is still on disk.
std::string excerpt_for(const store::SignatureCount& count, const std::filesystem::path& dir) {
    std::string excerpt = excerpt_around(count.evidence, count.line);
    if (excerpt.empty() && !dir.empty()) {
        auto log = dir / std::to_string(count.run_id) / count.cell_id /
                   std::to_string(count.repetition) / "console.log";
        std::error_code ec;
        if (std::filesystem::is_regular_file(log, ec))
            excerpt = excerpt_around(util::read_file(log), count.line);
    }
    return excerpt.empty() ? "> " + count.line + "\n" : excerpt;
}

void group_signatures(ReportData& data, const std::vector<store::SignatureCount>& counts,
                      const std::map<std::pair<int64_t, std::string>, size_t>& index_of,
                      const std::filesystem::path& dir) {
    std::map<std::pair<core::Severity, std::string>, size_t> group_of;
    for (const auto& count : counts) {
        auto cell = index_of.find({count.run_id, count.cell_id});
        if (cell == index_of.end())
            continue;
        auto key = std::make_pair(count.severity, count.signature);
        auto [it, added] = group_of.emplace(key, data.signatures.size());
        if (added) {
            data.signatures.emplace_back();
            data.signatures.back().severity = count.severity;
            data.signatures.back().signature = count.signature;
        }
        SignatureGroup& group = data.signatures[it->second];
        group.lines += count.lines;
        group.samples += count.samples;
        group.cells.push_back(Occurrence{cell->second, count.lines, count.samples, count.repetition,
                                         count.source, count.line, excerpt_for(count, dir)});
    }
    for (auto& group : data.signatures)
        std::sort(group.cells.begin(), group.cells.end(),
                  [](const Occurrence& a, const Occurrence& b) { return a.cell < b.cell; });
    std::stable_sort(data.signatures.begin(), data.signatures.end(),
                     [](const SignatureGroup& a, const SignatureGroup& b) {
                         if (a.severity != b.severity)
                             return a.severity == core::Severity::error;
                         return a.lines > b.lines;
                     });
}

void add_failures(ReportData& data, const std::vector<store::FailureCount>& counts,
                  const std::map<std::pair<int64_t, std::string>, size_t>& index_of) {
    constexpr size_t k_last_lines = 5;
    for (const auto& count : counts) {
        auto cell = index_of.find({count.run_id, count.first.cell_id});
        if (cell == index_of.end())
            continue;
        note_why(data.cells[cell->second], count.first);
        data.failures.push_back(Failure{cell->second, count.first.outcome, count.samples,
                                        count.first.repetition, core::why_not_ok(count.first),
                                        core::last_output(count.first, k_last_lines)});
    }
    std::stable_sort(data.failures.begin(), data.failures.end(),
                     [](const Failure& a, const Failure& b) { return a.cell < b.cell; });
}

std::vector<std::string> prefixes_to_read(const Selection& selection) {
    switch (selection.metrics) {
    case MetricsRead::none:
        return {};
    case MetricsRead::table:
        return table_metric_prefixes(selection.chosen_metrics);
    case MetricsRead::all:
        break;
    }
    return {""};
}

// A chosen metric the data lacks may be a typo: the names the runs' samples carry tell,
// and they are read only then, since that reads every metric row.
Expected<void> check_chosen(store::Database& db, const std::vector<int64_t>& run_ids,
                            const ReportData& data, const std::vector<std::string>& chosen) {
    auto loaded = metric_names(data);
    for (const auto& metric : chosen)
        if (!std::binary_search(loaded.begin(), loaded.end(), metric))
            return check_metrics(RIG_TRY(db.metric_names(run_ids)), chosen);
    return {};
}

} // namespace

Expected<ReportData> load(store::Database& db, const Selection& selection) {
    ReportData data;
    auto runs = RIG_TRY(selected_runs(db, selection.runs));
    std::vector<int64_t> run_ids;
    std::vector<CellResult> all;
    for (const auto& run : runs) {
        run_ids.push_back(run.id);
        data.runs.push_back(RunHeader{run.id, run.scenario_name, run.started_at, run.status});
        for (auto& cell : RIG_TRY(db.cells(run.id))) {
            CellResult& result = all.emplace_back();
            result.run_id = run.id;
            result.cell = std::move(cell);
        }
    }
    data.kernel_packages = RIG_TRY(db.kernel_packages(run_ids));
    RIG_TRY(check_keys(all, selection));
    for (auto& result : all)
        if (selected(result, selection))
            data.cells.push_back(std::move(result));
    if (data.cells.empty())
        return fail(ErrorKind::usage, "no cell of the selected runs matches the filters");

    std::map<std::pair<int64_t, std::string>, size_t> index_of;
    for (size_t i = 0; i < data.cells.size(); ++i)
        index_of[{data.cells[i].run_id, data.cells[i].cell.id}] = i;
    // Rows arrive in storage order; a hash on the cell id finds each one's cell fast.
    std::unordered_map<std::string, size_t> by_cell_id;
    const bool one_run = run_ids.size() == 1;
    if (one_run)
        for (size_t i = 0; i < data.cells.size(); ++i)
            by_cell_id[data.cells[i].cell.id] = i;
    auto cell_of = [&](int64_t run_id, const std::string& cell_id) -> CellResult* {
        if (one_run) {
            auto it = by_cell_id.find(cell_id);
            return it == by_cell_id.end() ? nullptr : &data.cells[it->second];
        }
        auto it = index_of.find({run_id, cell_id});
        return it == index_of.end() ? nullptr : &data.cells[it->second];
    };
    // The database's per-cell aggregates: a row per cell and outcome, and per distinct
    // value of a figure, however many samples there are.
    RIG_TRY(db.outcome_tallies(run_ids, [&](const store::OutcomeTally& tally) {
        if (CellResult* result = cell_of(tally.run_id, tally.cell_id))
            tally_outcomes(*result, tally);
    }));
    // A cell's values of a figure arrive together: its cell is looked up once.
    CellResult* last = nullptr;
    std::pair<int64_t, std::string> last_cell;
    store::FigureSelection figures;
    figures.metric_prefixes = prefixes_to_read(selection);
    RIG_TRY(db.figure_counts(run_ids, figures, [&](const store::FigureCount& row) {
        if (row.run_id != last_cell.first || row.cell_id != last_cell.second) {
            last_cell = {row.run_id, row.cell_id};
            last = cell_of(row.run_id, row.cell_id);
        }
        if (last)
            tally_figure(*last, row.figure, row.name, row.unit, row.value,
                         static_cast<size_t>(row.count));
    }));
    for (auto& result : data.cells)
        finish(result);
    RIG_TRY(check_chosen(db, run_ids, data, selection.chosen_metrics));

    if (selection.signatures == Signatures::load) {
        group_signatures(data, RIG_TRY(db.signature_counts(run_ids)), index_of, selection.runs_dir);
        add_failures(data, RIG_TRY(db.unexplained_failures(run_ids)), index_of);
    }
    return data;
}

} // namespace rig::report
