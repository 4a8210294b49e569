// SPDX-License-Identifier: MIT
// Request counts to metrics.
#include "run/protocol_metrics.hpp"

#include "guest/job.hpp"
#include "vm/virtiofsd_log.hpp"

#include <algorithm>

namespace rig::run {

namespace {

void add_window(std::vector<core::Metric>& metrics, const std::string& prefix,
                const std::set<std::string>& shares, const vm::TraceWindow& window,
                const CountNames& names) {
    for (const std::string& share : shares) {
        vm::ShareCounts counts;
        if (auto found = window.find(share); found != window.end())
            counts = found->second;
        for (const std::string& type : names.types)
            counts.by_type.try_emplace(type, 0);
        std::string name = prefix + names.family + ".";
        if (names.per_share)
            name += share + ".";
        metrics.push_back({name + "requests", static_cast<double>(counts.requests), "requests"});
        for (const auto& [type, number] : counts.by_type)
            metrics.push_back({name + type, static_cast<double>(number), "requests"});
        if (!names.bytes)
            continue;
        metrics.push_back({name + "read_bytes", static_cast<double>(counts.read_bytes), "bytes"});
        metrics.push_back({name + "write_bytes", static_cast<double>(counts.write_bytes), "bytes"});
    }
}

void add(vm::ShareCounts& into, const vm::ShareCounts& counts) {
    into.requests += counts.requests;
    into.read_bytes += counts.read_bytes;
    into.write_bytes += counts.write_bytes;
    for (const auto& [type, number] : counts.by_type)
        into.by_type[type] += number;
}

// Keyed by the shares' metric names: the guest root's shares count as one, "root".
vm::TraceWindow sum(const std::vector<vm::TraceWindow>& windows) {
    vm::TraceWindow total;
    for (const vm::TraceWindow& window : windows)
        for (const auto& [share, counts] : window)
            add(total[share_metric_name(share)], counts);
    return total;
}

} // namespace

CountNames ninep_count_names() {
    return {"9p", true, true, vm::ninep_type_names()};
}

CountNames virtiofs_count_names() {
    return {"virtiofs", false, false, vm::fuse_request_names()};
}

std::string share_metric_name(const std::string& aname) {
    return guest::is_root_tag(aname) ? "root" : aname;
}

std::vector<core::Metric> protocol_metrics(const vm::ProtocolCounts& counts,
                                           const std::vector<std::string>& phases,
                                           const CountNames& names,
                                           const std::vector<bool>& check_after) {
    // Each phase's window, the checks' left out.
    std::vector<vm::TraceWindow> windows;
    size_t next = 0;
    for (size_t i = 0; i < std::max<size_t>(phases.size(), 1); ++i) {
        if (next >= counts.windows.size())
            return {};
        windows.push_back(counts.windows[next++]);
        next += i < check_after.size() && check_after[i] ? 1 : 0;
    }
    std::vector<core::Metric> metrics;
    if (next != counts.windows.size())
        return metrics;
    std::set<std::string> shares;
    for (const std::string& share : counts.shares)
        shares.insert(share_metric_name(share));
    add_window(metrics, "", shares, sum(windows), names);
    for (size_t i = 0; i < phases.size(); ++i)
        add_window(metrics, phases[i] + "/", shares, sum({windows[i]}), names);
    return metrics;
}

} // namespace rig::run
