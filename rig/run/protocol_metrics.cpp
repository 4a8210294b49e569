// SPDX-License-Identifier: MIT
// 9p trace counts to metrics.
#include "run/protocol_metrics.hpp"

#include "guest/job.hpp"

namespace rig::run {

namespace {

void add_window(std::vector<core::Metric>& metrics, const std::string& prefix,
                const std::set<std::string>& shares, const vm::TraceWindow& window) {
    for (const std::string& share : shares) {
        vm::ShareCounts counts;
        if (auto found = window.find(share); found != window.end())
            counts = found->second;
        // Every type, zeros included, so that two samples of a cell carry the same names
        // and "no mkdir at all" reads 0, not n/a.
        for (const std::string& type : vm::ninep_type_names())
            counts.by_type.try_emplace(type, 0);
        std::string name = prefix + "9p." + share_metric_name(share) + ".";
        metrics.push_back({name + "requests", static_cast<double>(counts.requests), "requests"});
        for (const auto& [type, number] : counts.by_type)
            metrics.push_back({name + type, static_cast<double>(number), "requests"});
        metrics.push_back({name + "read_bytes", static_cast<double>(counts.read_bytes), "bytes"});
        metrics.push_back({name + "write_bytes", static_cast<double>(counts.write_bytes), "bytes"});
    }
}

vm::TraceWindow sum(const std::vector<vm::TraceWindow>& windows) {
    vm::TraceWindow total;
    for (const vm::TraceWindow& window : windows)
        for (const auto& [share, counts] : window) {
            vm::ShareCounts& into = total[share];
            into.requests += counts.requests;
            into.read_bytes += counts.read_bytes;
            into.write_bytes += counts.write_bytes;
            for (const auto& [type, number] : counts.by_type)
                into.by_type[type] += number;
        }
    return total;
}

} // namespace

std::string share_metric_name(const std::string& aname) {
    return aname == guest::k_root_tag ? "root" : aname;
}

std::vector<core::Metric> protocol_metrics(const vm::ProtocolCounts& counts,
                                           const std::vector<std::string>& phases) {
    size_t expected = phases.empty() ? 1 : phases.size();
    std::vector<core::Metric> metrics;
    if (counts.windows.size() != expected)
        return metrics;
    add_window(metrics, "", counts.shares, sum(counts.windows));
    for (size_t i = 0; i < phases.size(); ++i)
        add_window(metrics, phases[i] + "/", counts.shares, counts.windows[i]);
    return metrics;
}

} // namespace rig::run
