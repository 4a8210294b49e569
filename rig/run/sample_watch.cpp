// SPDX-License-Identifier: MIT
// The watch of one booted guest: the poll loop and the order of its stops.
#include "run/sample_watch.hpp"

#include "core/classify.hpp"
#include "guest/protocol.hpp"

#include <thread>

namespace rig::run {

namespace {

std::string whole_seconds(std::chrono::milliseconds duration) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) +
           " s";
}

} // namespace

double seconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

CpuMark mark(vm::Vm& guest, const core::CpuSet& cpus) {
    return {guest.cpu_times(), proc::host_cpu(cpus).value_or(proc::HostCpu{}), Clock::now()};
}

void Watch::until_stop(core::SampleFacts& facts, std::string& note) {
    while (true) {
        take_in(1 << 20);
        if (auto stop = stop_reason(facts)) {
            record(*stop, facts, note);
            // A workload whose writes failed may end before a poll saw its share full.
            m_space.look();
            if (m_space.share_full() && !facts.share_full) {
                facts.share_full = true;
                note += m_space.share_reason();
            }
            return;
        }
        if (m_context.on_tick)
            m_context.on_tick();
        std::this_thread::sleep_for(m_pacing.poll);
    }
}

void Watch::take_in(size_t limit) {
    std::string console_bytes = m_console.read_new(limit);
    std::string channel_bytes = m_channel.read_new(limit);
    if (!console_bytes.empty() || !channel_bytes.empty())
        m_last_output = Clock::now();
    m_output.add_console(console_bytes);
    ChannelNews news = m_output.add_channel(channel_bytes);
    if (news.started) {
        m_start_mark = mark(m_guest, m_context.host_cpus);
        phase("running workload");
    }
    if (news.ended) {
        m_end_mark = mark(m_guest, m_context.host_cpus);
        phase("collecting");
    }
    for (bool pausing : news.pausing) {
        CpuMark now = mark(m_guest, m_context.host_cpus);
        if (pausing)
            m_pause_mark = now;
        else if (m_pause_mark)
            m_pauses.emplace_back(*std::exchange(m_pause_mark, std::nullopt), now);
        phase(pausing ? "checking" : "running workload");
    }
    if (news.done)
        m_done_at = Clock::now();
    if (m_server) {
        for (const std::string& name : news.change_requests)
            m_server->change(name);
        for (const std::string& check : news.hash_requests)
            m_server->hash(check);
    }
}

std::optional<Stop> Watch::stop_reason(core::SampleFacts& facts) {
    const guest::AgentReport& report = m_output.report();
    const core::Timeouts& timeouts = m_context.scenario.timeouts;
    Clock::time_point now = Clock::now();
    if ((facts.vm_exit = m_guest.poll()))
        return Stop::vm_exited;
    if (m_context.interrupted)
        return Stop::interrupted;
    // virtiofsd leaves when the guest resets its device at poweroff; only a death
    // before the agent is done is a failure. What the guest wrote since this loop's read
    // is read first: `done` may have come just before the helper left.
    if (!report.done && m_guest.helper_failure()) {
        take_in(1 << 20);
        if (!report.done && (m_helper_failure = m_guest.helper_failure()))
            return Stop::helper_failed;
    }
    if (m_output.panic_on_console() && now - m_last_output > m_pacing.panic_quiet)
        return Stop::panicked;
    // A setup failure powers the guest off by itself; only silence waits on it.
    if (!report.start_ns && !report.setup_error && now - m_launched > timeouts.boot)
        return Stop::boot_timeout;
    if (m_start_mark && !report.end_ns && now - m_start_mark->at > timeouts.workload)
        return Stop::workload_timeout;
    if (now - m_last_output > timeouts.silence)
        return Stop::silence;
    if (m_done_at && now - *m_done_at > m_pacing.poweroff_grace)
        return Stop::poweroff_overdue;
    m_space.look();
    if (m_space.full())
        return Stop::out_of_space;
    if (m_space.share_full())
        return Stop::share_full;
    return std::nullopt;
}

void Watch::record(Stop stop, core::SampleFacts& facts, std::string& note) const {
    const core::Timeouts& timeouts = m_context.scenario.timeouts;
    switch (stop) {
    case Stop::interrupted:
        facts.interrupted = true;
        note = "rig was interrupted during this sample\n";
        return;
    case Stop::helper_failed:
        facts.helper_failed = true;
        note = m_helper_failure.value_or("") + "\n";
        return;
    case Stop::boot_timeout:
        facts.boot_timed_out = true;
        note = "no workload start within " + whole_seconds(timeouts.boot) + " of boot\n";
        return;
    case Stop::workload_timeout:
        facts.workload_timed_out = true;
        note = "the workload did not end within its timeout\n";
        return;
    case Stop::silence:
        facts.silent = true;
        note =
            "no output on console or result channel for " + whole_seconds(timeouts.silence) + "\n";
        return;
    case Stop::share_full:
        facts.share_full = true;
        note = m_space.share_reason();
        return;
    // The output (a panic), the exit status and the space watch say the rest.
    case Stop::vm_exited:
    case Stop::panicked:
    case Stop::poweroff_overdue:
    case Stop::out_of_space:
        return;
    }
}

} // namespace rig::run
