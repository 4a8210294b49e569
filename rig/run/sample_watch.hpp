// SPDX-License-Identifier: MIT
// Watching one booted guest until it has to stop, and why it stopped.
#pragma once

#include "core/cpu_set.hpp"
#include "core/sample.hpp"
#include "proc/cpu.hpp"
#include "run/guest_output.hpp"
#include "run/sample.hpp"
#include "run/server_side.hpp"
#include "run/share_mount.hpp"
#include "util/file.hpp"
#include "util/follow.hpp"
#include "vm/hypervisor.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace rig::run {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b);

// CPU figures at one instant, so that the workload window is end minus start.
struct CpuMark {
    vm::CpuTimes vm;
    proc::HostCpu host;
    Clock::time_point at;
};

// The host's figure is over the guest's own CPU set when it has one: under --jobs the
// other guests' work is not this sample's.
CpuMark mark(vm::Vm& guest, const core::CpuSet& cpus);

// The lowest free space seen on a sample's filesystem. A disk that fills while the guest
// runs fails the guest's writes and QEMU's logs, and a compile that then fails (and
// deletes its output) would leave no trace of why; so it is looked at on every poll.
class SpaceWatch final {
public:
    explicit SpaceWatch(std::filesystem::path dir) : m_dir(std::move(dir)) {}

    // The work share's own filesystem, capped at `cap` bytes (run/share_mount.hpp).
    void watch_share(std::filesystem::path share, uint64_t cap) {
        m_share = std::move(share);
        m_share_cap = cap;
    }

    void look() {
        if (auto free = util::available_bytes(m_dir); free && (!m_lowest || *free < *m_lowest))
            m_lowest = *free;
        if (m_share_cap == 0)
            return;
        auto free = util::available_bytes(m_share);
        m_share_full = m_share_full || (free && *free < k_share_full_bytes);
    }
    bool full() const { return m_refused || (m_lowest && *m_lowest < k_min_free_bytes); }
    // Too little room to start a sample in (its initramfs copy and logs alone take MiBs):
    // the folder then counts as full, and the run stops as for one that filled.
    bool refuse_start() {
        look();
        m_refused = m_lowest && *m_lowest < k_min_start_bytes;
        return m_refused;
    }
    bool share_full() const { return m_share_full; }
    std::string share_reason() const {
        return "the workload filled its share, capped at " + std::to_string(m_share_cap >> 20) +
               " MiB (guest.share_limit): the guest was stopped\n";
    }
    std::string reason() const {
        if (m_refused)
            return "the host's folder " + m_dir.string() + " has " +
                   std::to_string(m_lowest.value_or(0) >> 10) + " KiB free, less than the " +
                   std::to_string(k_min_start_bytes >> 20) + " MiB a sample needs to start";
        return "the host's folder " + m_dir.string() + " ran out of space during the sample (" +
               std::to_string(m_lowest.value_or(0) >> 10) + " KiB free at the lowest)";
    }

private:
    std::filesystem::path m_dir;
    std::optional<uint64_t> m_lowest;
    bool m_refused = false;
    std::filesystem::path m_share;
    uint64_t m_share_cap = 0;
    bool m_share_full = false;
};

// Why rig stops watching a guest. The checks run in this order, so when several hold at
// one poll the first names the stop; core::classify then ranks the facts a stop records
// (a panic seen on the console wins over the timeout it caused).
enum class Stop {
    vm_exited,        // the guest powered off, or QEMU ended
    interrupted,      // Ctrl-C or SIGTERM reached rig
    helper_failed,    // virtiofsd died before the agent was done: infra error
    panicked,         // "Kernel panic" printed, then quiet for pacing.panic_quiet
    boot_timeout,     // no workload start within timeouts.boot
    workload_timeout, // no workload end within timeouts.workload of its start
    silence,          // nothing on console or channel for timeouts.silence
    poweroff_overdue, // everything reported, but the guest will not power off
    out_of_space,     // the sample's folder filled: nothing after can be trusted
    share_full,       // the workload filled its capped share: stopped, disk-quota
};

// One booted guest, watched until a Stop: its console and channel read as they grow,
// its milestones marked with CPU figures.
class Watch final {
public:
    Watch(const SampleContext& context, const Pacing& pacing, const vm::GuestSpec& spec,
          vm::Vm& guest, SpaceWatch& space, Clock::time_point launched)
        : m_context(context), m_pacing(pacing), m_guest(guest), m_space(space),
          m_console(spec.console_log), m_channel(spec.channel_log),
          m_output(context.module ? WorkloadOutput::kernel_log : WorkloadOutput::text),
          m_launched(launched), m_last_output(launched) {}

    // Where the coherency probe's changes are made and a check's server's copy hashed
    // when the guest asks (none: nowhere).
    void serve(ServerSide* server) { m_server = server; }

    // Polls the guest until it has to stop, and records why in facts and note.
    void until_stop(core::SampleFacts& facts, std::string& note);

    // What the guest wrote after the last poll still counts.
    void take_rest() { take_in(8 << 20); }

    const GuestOutput& output() const { return m_output; }
    Clock::time_point launched() const { return m_launched; }
    const std::optional<CpuMark>& start_mark() const { return m_start_mark; }
    const std::optional<CpuMark>& end_mark() const { return m_end_mark; }
    // The workload's pauses for its checks, each from its start to its end mark.
    const std::vector<std::pair<CpuMark, CpuMark>>& pauses() const { return m_pauses; }

private:
    void phase(const std::string& name) const {
        if (m_context.on_phase)
            m_context.on_phase(name);
    }

    void take_in(size_t limit);

    // The one place that orders the stops (see Stop). The VM's exit status is a fact
    // whichever way the guest ended, so it is kept here.
    std::optional<Stop> stop_reason(core::SampleFacts& facts);

    void record(Stop stop, core::SampleFacts& facts, std::string& note) const;

    const SampleContext& m_context;
    const Pacing& m_pacing;
    vm::Vm& m_guest;
    SpaceWatch& m_space;
    util::FileFollower m_console;
    util::FileFollower m_channel;
    GuestOutput m_output;
    Clock::time_point m_launched;
    Clock::time_point m_last_output;
    std::optional<CpuMark> m_start_mark;
    std::optional<CpuMark> m_end_mark;
    std::optional<CpuMark> m_pause_mark; // of the pause under way
    std::vector<std::pair<CpuMark, CpuMark>> m_pauses;
    std::optional<Clock::time_point> m_done_at;
    std::optional<std::string> m_helper_failure;
    ServerSide* m_server = nullptr;
};

} // namespace rig::run
