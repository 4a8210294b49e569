// SPDX-License-Identifier: MIT
// The coherency probe's verdict.
#include "run/coherency.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <map>

namespace rig::run {

namespace {

// The totals and one kind's figures: reads summed, seconds the longest of its files.
// `unseen`: files whose change the guest did not see within the window.
struct Figures {
    double reads = 0;
    double seconds = 0;
    double unseen = 0;
    void add(const guest::StaleRecord& record) {
        reads += static_cast<double>(record.stale_reads);
        seconds = std::max(seconds, static_cast<double>(record.stale_ns) / 1e9);
        unseen += record.fresh ? 0 : 1;
    }
};

// The figures of one check's files, or all: in all and per kind of change.
struct CheckFigures {
    Figures all;
    std::map<core::Change, Figures> by_kind;
    int stale_files = 0;
    int broken = 0;
};

void push_figures(std::vector<core::Metric>& metrics, const std::string& prefix,
                  std::optional<core::Change> change, const Figures& figures) {
    metrics.push_back({prefix + core::stale_metric(change, "reads"), figures.reads, "reads"});
    metrics.push_back({prefix + core::stale_metric(change, "seconds"), figures.seconds, "s"});
    metrics.push_back({prefix + core::stale_metric(change, "unseen"), figures.unseen, "files"});
}

void push_check(std::vector<core::Metric>& metrics, const std::string& prefix,
                const CheckFigures& figures) {
    push_figures(metrics, prefix, std::nullopt, figures.all);
    metrics.push_back({prefix + core::stale_metric(std::nullopt, "files"),
                       static_cast<double>(figures.stale_files), "files"});
    metrics.push_back(
        {prefix + std::string(core::k_stale_broken), static_cast<double>(figures.broken), "files"});
    for (const auto& [change, kind] : figures.by_kind)
        push_figures(metrics, prefix, change, kind);
}

// "a rewrite", "an append".
std::string a_change(const std::string& kind) {
    return (kind.front() == 'a' ? "an " : "a ") + kind;
}

// How late a change may show under the promise; none for a mount that promises nothing.
std::optional<double> allowed_seconds(const core::Coherence& promise) {
    switch (promise.promise) {
    case core::Coherence::Promise::immediate:
        return 0.0;
    case core::Coherence::Promise::within:
        return promise.seconds + k_coherence_slack_seconds;
    case core::Coherence::Promise::none:
        return std::nullopt;
    }
    return std::nullopt;
}

} // namespace

CoherencyCheck check_coherency(const core::Workload& workload,
                               const std::vector<guest::StaleRecord>& records,
                               const core::Coherence& promise) {
    CoherencyCheck check;
    CheckFigures total;
    std::map<std::string, CheckFigures> by_check;
    const std::optional<double> allowed = allowed_seconds(promise);
    for (const workload::CoherencyFile& file : workload::coherency_files(workload)) {
        const std::string kind(to_string(file.change));
        const std::string name =
            file.name + (file.check.empty() ? "" : " (after " + file.check + ")");
        auto record =
            std::find_if(records.begin(), records.end(),
                         [&](const guest::StaleRecord& r) { return r.name == file.name; });
        if (record == records.end()) {
            std::string line = "coherency: " + name + " (" + kind + ") was not probed";
            check.lines.push_back({core::Severity::warning, "coherency", line,
                                   "coherency: " + a_change(kind) + " was not probed"});
            continue;
        }
        const double seconds = static_cast<double>(record->stale_ns) / 1e9;
        const bool stale = record->stale_reads > 0 || !record->fresh;
        // An immediate promise is broken by one stale read, a timed one by a change seen late.
        const bool broken =
            allowed && stale && (*allowed == 0 || seconds > *allowed || !record->fresh);
        for (CheckFigures* figures : {&total, &by_check[file.check]}) {
            figures->all.add(*record);
            figures->by_kind[file.change].add(*record);
            figures->stale_files += stale ? 1 : 0;
            figures->broken += broken ? 1 : 0;
        }
        if (!broken)
            continue;
        std::string seen = record->fresh ? "seen after " + util::fixed(seconds, 2) + " s"
                                         : "not seen in " + util::fixed(seconds, 2) + " s";
        check.lines.push_back({core::Severity::error, "coherency",
                               "coherency: " + name + ": the server's " + kind + " was " + seen +
                                   " (" + std::to_string(record->stale_reads) +
                                   " stale reads); the mount promises " + core::describe(promise),
                               "coherency: " + a_change(kind) + " stays stale past the promise (" +
                                   core::describe(promise) + ")"});
    }
    check.broken = total.broken;
    push_check(check.metrics, "", total);
    // Each check's own, when the workload checks after phases too.
    if (!workload.check_after.empty())
        for (const auto& [at, figures] : by_check)
            push_check(check.metrics, core::check_prefix(workload, at), figures);
    return check;
}

} // namespace rig::run
