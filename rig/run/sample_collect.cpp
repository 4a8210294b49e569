// SPDX-License-Identifier: MIT
// A sample's metrics, CPU figures and evidence, collected once its guest has stopped.
#include "run/sample_collect.hpp"

#include "guest/job.hpp"
#include "run/protocol_metrics.hpp"
#include "util/follow.hpp"
#include "util/strings.hpp"
#include "vm/protocol_trace.hpp"
#include "vm/virtiofsd_log.hpp"

#include <algorithm>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

// Appends one source's counts; a source that is missing or incomplete adds nothing.
void add_counts(core::Sample& sample, const Expected<vm::ProtocolCounts>& counts,
                const std::vector<std::string>& phases, const std::vector<bool>& check_after,
                const CountNames& names, std::string& note) {
    if (!counts) {
        note += counts.error().message + "\n";
        return;
    }
    auto metrics = protocol_metrics(*counts, phases, names, check_after);
    if (metrics.empty())
        note += names.family + " counts: " + std::to_string(counts->marks) +
                " marks do not match the workload's phases; no counts\n";
    sample.metrics.insert(sample.metrics.end(), metrics.begin(), metrics.end());
}

} // namespace

void add_host_metrics(core::Sample& sample, const guest::AgentReport& report,
                      const CountSources& sources, const std::vector<std::string>& paused,
                      std::string& note) {
    // These names are the host's alone, as "guest." is the agent's: a workload cannot
    // forge them.
    std::erase_if(sample.metrics, [](const core::Metric& metric) {
        return util::starts_with(metric.name, "9p.") || util::starts_with(metric.name, "virtiofs.");
    });
    std::vector<std::string> phases;
    // The agent checks after a phase of `paused` that went well (guests/init, check_at).
    std::vector<bool> check_after;
    for (const guest::PhaseRecord& phase : report.phases) {
        sample.metrics.push_back({phase.name + "/seconds", phase.seconds(), "s"});
        phases.push_back(phase.name);
        check_after.push_back(phase.exit_status == 0 &&
                              std::find(paused.begin(), paused.end(), phase.name) != paused.end());
    }
    if (!sources.trace.empty() && report.end_ns)
        add_counts(sample, vm::read_protocol_trace(sources.trace, guest::k_mark_tag), phases,
                   check_after, ninep_count_names(), note);
    if (!sources.virtiofsd_log.empty() && report.end_ns)
        add_counts(sample, vm::read_virtiofsd_log(sources.virtiofsd_log, guest::k_work_tag), phases,
                   check_after, virtiofs_count_names(), note);
    std::error_code ec;
    if (!sources.trace.empty()) {
        fs::remove(sources.trace, ec);
        fs::remove(sources.trace.string() + ".events", ec);
    }
    // Kept when virtiofsd may be why the sample failed: it is that sample's evidence.
    if (!sources.virtiofsd_log.empty() && sample.outcome != core::Outcome::infra_error)
        fs::remove(sources.virtiofsd_log, ec);
}

std::string evidence_for(core::Outcome outcome, const guest::AgentReport& report,
                         const std::string& console_tail, const std::string& note) {
    std::string evidence = note;
    auto tail_of = [](const std::string& text, size_t bytes) {
        return text.size() > bytes ? text.substr(text.size() - bytes) : text;
    };
    if (report.setup_error)
        evidence += "agent setup failed: " + *report.setup_error + "\n";
    switch (outcome) {
    case core::Outcome::workload_failed:
    case core::Outcome::errors:
        if (!report.tail.empty())
            return evidence + "workload output (tail):\n" + tail_of(report.tail, 4096);
        return evidence + "console (tail):\n" + tail_of(console_tail, 4096);
    case core::Outcome::ok:
    case core::Outcome::wrong_output: // the note lists the wrong files
        return evidence;
    default:
        return evidence + "console (tail):\n" + tail_of(console_tail, 4096);
    }
}

SampleRun settle(core::Sample sample, const SpaceWatch& space, const fs::path& dir) {
    if (!space.full())
        return {std::move(sample), std::nullopt};
    std::string reason = space.reason();
    sample.evidence = reason + "\n" + sample.evidence;
    std::error_code ec;
    fs::remove_all(dir / "share", ec);
    fs::remove(dir / "initrd.cpio", ec);
    return {std::move(sample), reason};
}

std::string helper_logs(const fs::path& dir) {
    std::string out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.path().extension() != ".log" || entry.path().filename() == "console.log")
            continue;
        util::FileFollower log(entry.path());
        std::string text = log.read_new(1 << 20);
        if (text.empty())
            continue;
        if (text.size() > 2048)
            text = text.substr(text.size() - 2048);
        out += entry.path().filename().string() + " (tail):\n" + text + "\n";
    }
    return out;
}

void add_cpu_figures(core::Sample& sample, const Watch& watch) {
    if (!watch.start_mark() || !watch.end_mark())
        return;
    const CpuMark& start = *watch.start_mark();
    const CpuMark& end = *watch.end_mark();
    sample.wall_seconds = seconds_between(start.at, end.at);
    sample.qemu_cpu_seconds = end.vm.vm_seconds - start.vm.vm_seconds;
    sample.helper_cpu_seconds = end.vm.helper_seconds - start.vm.helper_seconds;
    sample.host_cpu_seconds = end.host.busy_seconds - start.host.busy_seconds;
    double total = end.host.total_seconds - start.host.total_seconds;
    // The workload's pauses for its checks count nowhere.
    for (const auto& [from, to] : watch.pauses()) {
        sample.wall_seconds -= seconds_between(from.at, to.at);
        sample.qemu_cpu_seconds -= to.vm.vm_seconds - from.vm.vm_seconds;
        sample.helper_cpu_seconds -= to.vm.helper_seconds - from.vm.helper_seconds;
        sample.host_cpu_seconds -= to.host.busy_seconds - from.host.busy_seconds;
        total -= to.host.total_seconds - from.host.total_seconds;
    }
    sample.host_cpu_percent = total > 0 ? 100.0 * sample.host_cpu_seconds / total : 0;
}

} // namespace rig::run
