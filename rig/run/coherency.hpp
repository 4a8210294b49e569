// SPDX-License-Identifier: MIT
// The coherency probe's verdict (workload/coherency.hpp): what the guest saw after each
// change the server's side made (run/server_side.hpp), held against what the cell's mount
// promises (core::Coherence).
#pragma once

#include "core/fs.hpp"
#include "core/sample.hpp"
#include "guest/protocol.hpp"
#include "workload/coherency.hpp"

#include <string>
#include <vector>

namespace rig::run {

// Past a promise "within S", how much later a change may still show: the guest's reads are
// a TCG guest's, which a loaded host can stop for hundreds of milliseconds between two.
inline constexpr double k_coherence_slack_seconds = 1.0;

struct CoherencyCheck {
    std::vector<core::Metric> metrics;
    std::vector<core::ErrorLine> lines; // an error per broken promise, a warning per file unseen
    int broken = 0;
};

// The guest's records against the plan and the promise: stale.reads, stale.seconds and
// stale.unseen in all and per kind of change (stale.rewrite.seconds), stale.files,
// stale.broken, and an error line for each file whose change showed later than the
// promise allows. A workload that checks after phases too also gets each check's figures
// under its prefix (core::check_prefix: "build/stale.seconds").
CoherencyCheck check_coherency(const core::Workload& workload,
                               const std::vector<guest::StaleRecord>& records,
                               const core::Coherence& promise);

} // namespace rig::run
