// SPDX-License-Identifier: MIT
// A sample's request counts as metrics: `9p.<share>.<type>` from QEMU's 9p trace and
// `virtiofs.<type>` from virtiofsd's log, over the whole workload, and the same prefixed
// `<phase>/` per phase.
#pragma once

#include "core/sample.hpp"
#include "vm/protocol_trace.hpp"

#include <string>
#include <vector>

namespace rig::run {

// How one source's counts are named.
struct CountNames {
    std::string family;             // "9p", "virtiofs"
    bool per_share = true;          // "9p.work.walk"; else "virtiofs.lookup"
    bool bytes = true;              // read_bytes and write_bytes are known
    std::vector<std::string> types; // every window reports each, zeros included
};
CountNames ninep_count_names();
CountNames virtiofs_count_names();

// The metric name of a share: "root" for the guest's root, else its tag ("work").
std::string share_metric_name(const std::string& aname);

// `phases` are the phases the agent reported, in order; none for a one-script workload.
// The counts must hold one window per phase (one in all without phases), else they are
// incomplete (a guest killed mid-phase) and no metric is made: a missing count is
// unknown, never 0. Every share gets every type, zeros included, so that two samples of
// a cell carry the same names and "no mkdir at all" reads 0, not n/a. `check_after[i]`:
// the workload paused after phase i for a check (guests/init, check_at), whose requests
// are a window of their own that counts nowhere.
std::vector<core::Metric> protocol_metrics(const vm::ProtocolCounts& counts,
                                           const std::vector<std::string>& phases,
                                           const CountNames& names,
                                           const std::vector<bool>& check_after = {});

} // namespace rig::run
