// SPDX-License-Identifier: MIT
// libFuzzer entry: any bytes a guest prints, on its console and on its result channel,
// must describe a sample within the protocol's bounds, and the same sample whether they
// arrive at once or a byte at a time.
#include "core/classify.hpp"
#include "guest/protocol.hpp"
#include "run/guest_output.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

using rig::guest::AgentReport;
using rig::run::GuestOutput;

namespace {

void check(bool holds) {
    if (!holds)
        __builtin_trap();
}

// What rig keeps of a report is bounded and storable, whatever the guest sent.
void check_report(const AgentReport& report) {
    check(report.mounts_text.size() <= AgentReport::k_max_mounts);
    check(report.tail.size() <= AgentReport::k_max_tail);
    check(report.outputs_text.size() <= AgentReport::k_max_outputs &&
          report.served_text.size() <= AgentReport::k_max_outputs);
    check(report.metrics.size() <= AgentReport::k_max_metrics);
    check(report.phases.size() <= AgentReport::k_max_phases);
    check(report.module_failures.size() <= AgentReport::k_max_module_failures);
    for (const auto& metric : report.metrics)
        check(std::isfinite(metric.value) && rig::guest::is_token(metric.name) &&
              rig::guest::is_token(metric.unit));
}

// Everything a sample takes from the output, as text, so that two readings compare.
std::string described(const GuestOutput& output, const rig::core::Filesystem& fs) {
    rig::core::SampleFacts facts;
    rig::core::Sample sample;
    output.describe(fs, facts, sample);
    std::ostringstream out;
    out << to_string(rig::core::classify(facts)) << '\n'
        << sample.error_count << ' ' << sample.warning_count << ' ' << sample.exit_status << ' '
        << sample.guest_seconds << '\n'
        << sample.mount_negotiated << '\n'
        << sample.msize_negotiated.value_or(0) << ' ' << sample.cache_negotiated << '\n';
    for (const auto& line : sample.lines)
        out << (line.severity == rig::core::Severity::error) << line.source << ' ' << line.line
            << '\n'
            << line.signature << '\n';
    for (const auto& metric : sample.metrics)
        out << metric.name << ' ' << metric.value << ' ' << metric.unit << '\n';
    const AgentReport& report = output.report();
    for (const auto& phase : report.phases)
        out << phase.name << ' ' << phase.seconds() << ' ' << phase.exit_status << '\n';
    for (const auto& failure : report.module_failures)
        out << failure << '\n';
    out << report.kernel_release << '\n'
        << report.setup_error.value_or("") << '\n'
        << report.tail << '\n'
        << report.mounts_text << '\n'
        << report.outputs_hashed << report.served_hashed << report.outputs_text << '\n'
        << report.served_text << '\n'
        << output.channel_note() << output.console_tail() << output.panic_on_console();
    return out.str();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    // The same bytes go to both streams: the console's scanner must bear records, and the
    // channel's parser console noise.
    GuestOutput whole;
    whole.add_console(bytes);
    whole.add_channel(bytes);
    GuestOutput bytewise;
    int started = 0, ended = 0, done = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
        bytewise.add_console(bytes.substr(i, 1));
        auto news = bytewise.add_channel(bytes.substr(i, 1));
        started += news.started;
        ended += news.ended;
        done += news.done;
    }
    check_report(whole.report());
    // run_sample takes one CPU mark at each milestone: each is news once, if ever.
    const AgentReport& report = bytewise.report();
    check(started == report.start_ns.has_value() && ended == report.end_ns.has_value() &&
          done == report.done);
    for (const rig::core::Filesystem* fs : rig::core::filesystems())
        check(described(whole, *fs) == described(bytewise, *fs));
    return 0;
}
