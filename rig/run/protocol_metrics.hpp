// SPDX-License-Identifier: MIT
// A sample's 9p request counts as metrics: `9p.<share>.<type>` over the whole workload,
// and `<phase>/9p.<share>.<type>` per phase.
#pragma once

#include "core/sample.hpp"
#include "vm/protocol_trace.hpp"

#include <string>
#include <vector>

namespace rig::run {

// The metric name of a share: "root" for the guest's root, else its tag ("work").
std::string share_metric_name(const std::string& aname);

// `phases` are the phases the agent reported, in order; none for a one-script workload.
// The trace must hold one window per phase (one in all without phases), else the counts
// are incomplete (a guest killed mid-phase) and no metric is made: a missing count is
// unknown, never 0. Every attached share gets every request type, zeros included.
std::vector<core::Metric> protocol_metrics(const vm::ProtocolCounts& counts,
                                           const std::vector<std::string>& phases);

} // namespace rig::run
