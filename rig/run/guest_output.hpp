// SPDX-License-Identifier: MIT
// A guest's output as it arrives, console and result channel, turned into what a sample
// records. Pure (no files, no clock): run_sample reads untrusted guest bytes only
// through it, and tests/fuzz/guest_output_fuzzer.cpp feeds it anything.
#pragma once

#include "core/classify.hpp"
#include "core/evidence.hpp"
#include "core/fs.hpp"
#include "core/sample.hpp"
#include "guest/protocol.hpp"
#include "util/follow.hpp"
#include "util/tail.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::run {

// The agent's milestones that one chunk of the channel reached for the first time:
// run_sample takes its CPU marks and names its phase at them.
struct ChannelNews {
    bool started = false; // the workload's start
    bool ended = false;   // the workload's end
    bool done = false;    // the agent's last record
    // Files of the coherency probe the guest asks the server's side to change now.
    std::vector<std::string> change_requests;
    // Checks whose server's copy the guest asks the host to hash now.
    std::vector<std::string> hash_requests;
    // The workload's pauses for a check, in record order: true when one began, false when
    // it ended.
    std::vector<bool> pausing;
};

// What the workload's output is: a program's text, or a module's kernel log since its
// load with each line's "<N>" printk level, where the level says what is an error.
enum class WorkloadOutput { text, kernel_log };

class GuestOutput final {
public:
    static constexpr size_t k_console_tail = 64 * 1024;

    explicit GuestOutput(WorkloadOutput kind = WorkloadOutput::text) : m_kind(kind) {}

    // Bytes may be cut anywhere: a line split over two calls is the same line.
    void add_console(std::string_view bytes);
    ChannelNews add_channel(std::string_view bytes);

    const guest::AgentReport& report() const { return m_report; }
    bool panic_on_console() const { return m_panic; }
    const std::string& console_tail() const { return m_console_tail.text(); }
    // "result channel: N junk lines, M malformed records\n", or "" when all was clean.
    std::string channel_note() const;

    // Once the guest is gone: the facts its output gives (hello, setup failure, end, exit
    // status, panic, error lines), and the sample's error lines and counts, the agent's
    // metrics, its exit status, the guest-measured time and the negotiated work mount.
    void describe(const core::Filesystem& fs, core::SampleFacts& facts, core::Sample& sample) const;

private:
    WorkloadOutput m_kind;
    util::TailBuffer m_console_tail{k_console_tail};
    util::LineSplitter m_console_lines;
    core::Scan m_console_scan;
    bool m_panic = false;
    // A panic's replay of the whole log (panic_print=0x20) starts again at 0.000000: its
    // lines up to the latest one printed live were scanned when they were printed.
    uint64_t m_latest_stamp = 0;
    bool m_replaying = false;
    guest::ChannelParser m_channel;
    guest::AgentReport m_report;
};

} // namespace rig::run
