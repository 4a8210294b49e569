// SPDX-License-Identifier: MIT
// The "what changed" block.
#include "report/changes.hpp"

#include "core/scenario.hpp"
#include "core/significance.hpp"
#include "report/cells.hpp"
#include "report/metrics.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace rig::report {

namespace {

// The values a side carries of one figure, sorted.
struct Side {
    const core::Distribution* values = nullptr;
    const core::Summary* summary = nullptr;
    std::string unit;
};

// Every figure of a cell by name: its metrics, the duration and host CPU.
std::map<std::string, Side> figures(const CellResult& result) {
    std::map<std::string, Side> out;
    for (const auto& [name, metric] : result.metrics)
        out[name] = {&metric.values, &metric.summary, metric.unit};
    if (!result.durations.empty())
        out["duration"] = {&result.durations, &result.duration, "s"};
    if (!result.cpu_percent.empty())
        out["host.cpu"] = {&result.cpu_percent, &result.cpu, "%"};
    return out;
}

bool one_sided(ChangeKind kind) {
    return kind == ChangeKind::appeared || kind == ChangeKind::vanished;
}

// Larger changes first; a change of one side only after every measured one.
bool ranks_before(const MetricChange& a, const MetricChange& b) {
    if (one_sided(a.kind) != one_sided(b.kind))
        return !one_sided(a.kind);
    double size_a = std::fabs(a.change_percent), size_b = std::fabs(b.change_percent);
    if (size_a != size_b)
        return size_a > size_b;
    return a.name < b.name;
}

// Groups in the order of their first (largest) change, lines kept in rank order.
void order(std::vector<MetricChange>& changes) {
    std::stable_sort(changes.begin(), changes.end(), ranks_before);
    std::map<std::string, size_t> group_rank;
    for (const auto& change : changes)
        group_rank.emplace(change.group, group_rank.size());
    std::stable_sort(changes.begin(), changes.end(), [&](const auto& a, const auto& b) {
        return group_rank.at(a.group) < group_rank.at(b.group);
    });
}

std::string value_text(double value, const std::string& unit) {
    std::string text = metric_text(value);
    // A unit that repeats the metric's kind adds nothing: "requests" after a request type.
    if (unit.empty() || unit == "requests" || unit == "calls")
        return text;
    return text + (unit == "%" ? "" : " ") + unit;
}

std::string percent_text(double percent) {
    if (std::isinf(percent))
        return percent > 0 ? "from 0" : "to below 0";
    return fmt::format("{:+.1f} %", percent);
}

std::string_view kind_name(ChangeKind kind) {
    switch (kind) {
    case ChangeKind::exact:
        return "exact";
    case ChangeKind::tested:
        return "tested";
    case ChangeKind::appeared:
        return "appeared";
    case ChangeKind::vanished:
        return "vanished";
    }
    return "exact";
}

util::Json summary_json(const core::Summary& s) {
    if (s.n == 0)
        return nullptr;
    return {{"n", s.n}, {"median", s.median}, {"q1", s.q1}, {"q3", s.q3}};
}

} // namespace

std::string metric_group(std::string_view name) {
    // "PHASE/NAME" is a phase's; any other '/' is inside a name (a path class).
    std::string phase;
    if (auto slash = name.find('/');
        slash != std::string_view::npos && core::is_phase_name(name.substr(0, slash))) {
        phase = std::string(name.substr(0, slash));
        name = name.substr(slash + 1);
    }
    std::string group;
    if (name == "seconds" || name == "duration")
        group = "durations";
    else if (name == "host.cpu")
        group = "host";
    else if (util::starts_with(name, "9p.")) {
        auto parts = util::split(name, '.');
        group = "9p requests, share " + (parts.size() > 2 ? parts[1] : std::string("?"));
    } else if (util::starts_with(name, "virtiofs."))
        group = "virtiofs requests";
    else if (util::starts_with(name, "fuse.path."))
        group = "FUSE requests by path";
    else if (util::starts_with(name, "fuse."))
        group = "FUSE requests";
    else if (util::starts_with(name, "guest.func."))
        group = "guest function counts";
    else if (util::starts_with(name, "guest."))
        group = "guest counters";
    else
        group = "workload metrics";
    // A phase's own seconds are its duration: one group for every phase's duration.
    if (!phase.empty() && group != "durations")
        group += ", phase " + phase;
    return group;
}

ChangeSet what_changed(const CellResult& before, const CellResult& after, double fdr) {
    ChangeSet set;
    const auto theirs = figures(before);
    const auto mine = figures(after);
    std::vector<MetricChange> tested;
    auto make = [](const std::string& name, const Side& unit_side) {
        MetricChange change;
        change.group = metric_group(name);
        change.name = name;
        change.unit = unit_side.unit;
        return change;
    };
    for (const auto& [name, old] : theirs) {
        auto found = mine.find(name);
        if (found == mine.end()) {
            // Only when the later side measured anything at all: a cell without measured
            // samples tells nothing about what it lacks.
            if (!after.durations.empty()) {
                MetricChange change = make(name, old);
                change.before = *old.summary;
                change.kind = ChangeKind::vanished;
                set.changes.push_back(std::move(change));
            }
            continue;
        }
        const Side& now = found->second;
        ++set.compared;
        MetricChange change = make(name, now);
        change.before = *old.summary;
        change.after = *now.summary;
        change.change_percent = change_percent(now.summary->median, old.summary->median);
        if (old.values->without_spread() && now.values->without_spread()) {
            if (old.values->min() != now.values->min())
                set.changes.push_back(std::move(change));
            continue;
        }
        auto test = core::mann_whitney_u(*old.values, *now.values);
        if (!test)
            continue;
        change.kind = ChangeKind::tested;
        change.p = test->p;
        tested.push_back(std::move(change));
    }
    if (!before.durations.empty())
        for (const auto& [name, now] : mine)
            if (theirs.count(name) == 0) {
                MetricChange change = make(name, now);
                change.after = *now.summary;
                change.kind = ChangeKind::appeared;
                set.changes.push_back(std::move(change));
            }

    set.tested = tested.size();
    std::vector<double> p;
    for (const auto& change : tested)
        p.push_back(change.p);
    const std::vector<double> q = core::benjamini_hochberg(p);
    for (size_t i = 0; i < tested.size(); ++i)
        if (q[i] < fdr) {
            tested[i].q = q[i];
            set.changes.push_back(std::move(tested[i]));
        }
    order(set.changes);
    return set;
}

std::string change_line(const MetricChange& change) {
    const std::string n = fmt::format("n {}/{}", change.before.n, change.after.n);
    switch (change.kind) {
    case ChangeKind::appeared:
        return fmt::format("{}: absent -> {}, n {}", change.name,
                           value_text(change.after.median, change.unit), change.after.n);
    case ChangeKind::vanished:
        return fmt::format("{}: {} -> absent, n {}", change.name,
                           value_text(change.before.median, change.unit), change.before.n);
    case ChangeKind::exact:
        return fmt::format("{}: {} -> {} ({}), exact, {}", change.name,
                           value_text(change.before.median, change.unit),
                           value_text(change.after.median, change.unit),
                           percent_text(change.change_percent), n);
    case ChangeKind::tested:
        break;
    }
    return fmt::format(
        "{}: {} -> {} ({}), medians, q {}, {}, IQR {} / {}", change.name,
        value_text(change.before.median, change.unit), value_text(change.after.median, change.unit),
        percent_text(change.change_percent), util::format_p(change.q, util::PStyle::three_decimals),
        n, metric_text(change.before.q3 - change.before.q1),
        metric_text(change.after.q3 - change.after.q1));
}

std::string counted_text(const ChangeSet& set) {
    return fmt::format("{} figures compared, {} of them varying (rank test, false discovery "
                       "rate controlled)",
                       set.compared, set.tested);
}

std::string changes_text(const ChangeSet& set, const std::string& heading, bool markdown) {
    std::string out = markdown ? "### " + heading + "\n\n" : heading + "\n";
    const std::string counted = counted_text(set);
    if (set.changes.empty())
        return out + (markdown ? "" : "  ") + "nothing changed significantly; " + counted + "\n";
    out += (markdown ? "" : "  ") + counted + "\n";
    std::string group;
    for (const auto& change : set.changes) {
        if (change.group != group) {
            group = change.group;
            out += markdown ? "\n**" + group + "**\n\n" : "  " + group + ":\n";
        }
        out += (markdown ? "- " : "    ") + change_line(change) + "\n";
    }
    return out;
}

util::Json changes_json(const ChangeSet& set) {
    util::Json changes = util::Json::array();
    for (const auto& change : set.changes) {
        util::Json line{{"group", change.group},
                        {"name", change.name},
                        {"unit", change.unit},
                        {"kind", std::string(kind_name(change.kind))},
                        {"before", summary_json(change.before)},
                        {"after", summary_json(change.after)}};
        line["change_percent"] = std::isfinite(change.change_percent) && !one_sided(change.kind)
                                     ? util::Json(change.change_percent)
                                     : util::Json(nullptr);
        if (change.kind == ChangeKind::tested) {
            line["p"] = change.p;
            line["q"] = change.q;
        }
        changes.push_back(std::move(line));
    }
    return {{"compared", set.compared}, {"tested", set.tested}, {"changes", std::move(changes)}};
}

std::vector<CellChanges> changes_of(const ReportData& data,
                                    const std::vector<Comparison>& comparisons, double fdr) {
    std::vector<CellChanges> out;
    for (size_t i = 0; i < comparisons.size(); ++i) {
        const Comparison& comparison = comparisons[i];
        if (comparison.role != Role::compared)
            continue;
        out.push_back({i,
                       "what changed: " + describe_cell(data, i) + ", against " +
                           describe_cell(data, comparison.twin),
                       what_changed(data.cells[comparison.twin], data.cells[i], fdr)});
    }
    return out;
}

} // namespace rig::report
