// SPDX-License-Identifier: MIT
// The coherency probe's host side and its verdict.
#include "run/coherency.hpp"

#include "util/fd.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>

namespace rig::run {

namespace fs = std::filesystem;

ServerChanges::ServerChanges(const core::CoherencyParams& params, fs::path share, fs::path acks)
    : m_files(workload::coherency_files(params)), m_share(std::move(share)),
      m_acks(std::move(acks)) {}

void ServerChanges::on_request(const std::string& name) {
    auto file = std::find_if(m_files.begin(), m_files.end(),
                             [&](const workload::CoherencyFile& f) { return f.name == name; });
    if (file == m_files.end() || !m_done.insert(name).second)
        return;
    if (auto changed = workload::apply_change(m_share, *file); !changed) {
        m_note += changed.error().message + "\n";
        return;
    }
    // The acks folder is rig's alone: the guest sees it read-only.
    util::Fd ack(::open((m_acks / name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!ack.valid())
        m_note += "coherency: cannot acknowledge " + name + ": " + std::strerror(errno) + "\n";
}

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

void push_figures(std::vector<core::Metric>& metrics, std::optional<core::Change> change,
                  const Figures& figures) {
    metrics.push_back({core::stale_metric(change, "reads"), figures.reads, "reads"});
    metrics.push_back({core::stale_metric(change, "seconds"), figures.seconds, "s"});
    metrics.push_back({core::stale_metric(change, "unseen"), figures.unseen, "files"});
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

CoherencyCheck check_coherency(const core::CoherencyParams& params,
                               const std::vector<guest::StaleRecord>& records,
                               const core::Coherence& promise) {
    CoherencyCheck check;
    Figures all;
    std::map<core::Change, Figures> by_kind;
    int stale_files = 0;
    const std::optional<double> allowed = allowed_seconds(promise);
    for (const workload::CoherencyFile& file : workload::coherency_files(params)) {
        const std::string kind(to_string(file.change));
        auto record =
            std::find_if(records.begin(), records.end(),
                         [&](const guest::StaleRecord& r) { return r.name == file.name; });
        if (record == records.end()) {
            std::string line = "coherency: " + file.name + " (" + kind + ") was not probed";
            check.lines.push_back({core::Severity::warning, "coherency", line,
                                   "coherency: " + a_change(kind) + " was not probed"});
            continue;
        }
        all.add(*record);
        by_kind[file.change].add(*record);
        const double seconds = static_cast<double>(record->stale_ns) / 1e9;
        const bool stale = record->stale_reads > 0 || !record->fresh;
        stale_files += stale ? 1 : 0;
        // An immediate promise is broken by one stale read, a timed one by a change seen late.
        const bool broken =
            allowed && stale && (*allowed == 0 || seconds > *allowed || !record->fresh);
        if (!broken)
            continue;
        ++check.broken;
        std::string seen = record->fresh ? "seen after " + util::fixed(seconds, 2) + " s"
                                         : "not seen in " + util::fixed(seconds, 2) + " s";
        check.lines.push_back({core::Severity::error, "coherency",
                               "coherency: " + file.name + ": the server's " + kind + " was " +
                                   seen + " (" + std::to_string(record->stale_reads) +
                                   " stale reads); the mount promises " + core::describe(promise),
                               "coherency: " + a_change(kind) + " stays stale past the promise (" +
                                   core::describe(promise) + ")"});
    }
    push_figures(check.metrics, std::nullopt, all);
    check.metrics.push_back(
        {core::stale_metric(std::nullopt, "files"), static_cast<double>(stale_files), "files"});
    check.metrics.push_back(
        {std::string(core::k_stale_broken), static_cast<double>(check.broken), "files"});
    for (const auto& [change, figures] : by_kind)
        push_figures(check.metrics, change, figures);
    return check;
}

} // namespace rig::run
