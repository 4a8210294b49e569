// SPDX-License-Identifier: MIT
// Reading a guest's console and result channel.
#include "run/guest_output.hpp"

#include "guest/job.hpp"

namespace rig::run {

void GuestOutput::add_console(std::string_view bytes) {
    m_console_tail.append(bytes);
    m_console_lines.feed(bytes, [&](std::string_view line) {
        // A panicked guest without pvpanic never exits: run_sample stops it on this.
        if (line.find("Kernel panic") != std::string_view::npos)
            m_panic = true;
        if (auto stamp = core::printk_micros(line)) {
            if (*stamp == 0 && m_latest_stamp > 0)
                m_replaying = true;
            if (m_replaying && *stamp <= m_latest_stamp)
                return;
            m_replaying = false;
            m_latest_stamp = std::max(m_latest_stamp, *stamp);
        }
        core::merge_scan(m_console_scan, core::scan_console(line));
    });
}

ChannelNews GuestOutput::add_channel(std::string_view bytes) {
    const bool was_started = m_report.start_ns.has_value();
    const bool was_ended = m_report.end_ns.has_value();
    const bool was_done = m_report.done;
    const size_t changes = m_report.change_requests.size();
    const size_t hashes = m_report.hash_requests.size();
    std::vector<bool> pausing;
    for (const guest::Record& record : m_channel.feed(bytes)) {
        const bool was_paused = m_report.paused();
        m_report.apply(record);
        if (m_report.paused() != was_paused)
            pausing.push_back(m_report.paused());
    }
    auto since = [](const std::vector<std::string>& list, size_t from) {
        return std::vector<std::string>(list.begin() + static_cast<std::ptrdiff_t>(from),
                                        list.end());
    };
    return {!was_started && m_report.start_ns,
            !was_ended && m_report.end_ns,
            !was_done && m_report.done,
            since(m_report.change_requests, changes),
            since(m_report.hash_requests, hashes),
            std::move(pausing)};
}

std::string GuestOutput::channel_note() const {
    if (m_channel.junk_lines() == 0 && m_report.malformed == 0)
        return {};
    return "result channel: " + std::to_string(m_channel.junk_lines()) + " junk lines, " +
           std::to_string(m_report.malformed) + " malformed records\n";
}

void GuestOutput::describe(const core::Filesystem& fs, core::SampleFacts& facts,
                           core::Sample& sample) const {
    core::Scan scan = m_console_scan;
    core::merge_scan(scan, m_kind == WorkloadOutput::kernel_log
                               ? core::scan_module_output(m_report.tail)
                               : core::scan_text(m_report.tail, "workload"));
    facts.hello = m_report.hello;
    facts.setup_failed = m_report.setup_error.has_value();
    facts.ended = m_report.end_ns.has_value();
    facts.workload_exit = m_report.exit_status.value_or(-1);
    facts.panic_on_console = facts.panic_on_console || m_panic;
    facts.error_lines = scan.errors;

    sample.error_count = scan.errors;
    sample.warning_count = scan.warnings;
    sample.lines = std::move(scan.lines);
    sample.metrics = m_report.metrics;
    sample.exit_status = facts.workload_exit;
    sample.guest_seconds = m_report.workload_seconds();
    // /proc/mounts of init's namespace, where the guest root is /newroot.
    auto mount =
        guest::find_mount(m_report.mounts(), std::string("/newroot") + guest::k_work_mount_point);
    if (!mount)
        return;
    sample.mount_negotiated = mount->fstype + " " + mount->options;
    auto negotiated = core::negotiated_options(fs, mount->options);
    sample.msize_negotiated = negotiated.msize;
    sample.cache_negotiated = negotiated.cache;
}

} // namespace rig::run
