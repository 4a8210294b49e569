// SPDX-License-Identifier: MIT
// The coherency probe on the host's side (workload/coherency.hpp): the changes the guest
// asks for, made in the share and acknowledged, and what the guest then saw, held against
// what the cell's mount promises (core::Coherence).
#pragma once

#include "core/fs.hpp"
#include "core/sample.hpp"
#include "guest/protocol.hpp"
#include "workload/coherency.hpp"

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace rig::run {

// The server's side of a kernel-mounted share: each file of the plan is changed once, when
// the guest asks, then acknowledged by a file of its name in the uncached ack share. A
// request for anything else, or for a file a second time, changes nothing.
class ServerChanges final {
public:
    ServerChanges(const core::CoherencyParams& params, std::filesystem::path share,
                  std::filesystem::path acks);
    void on_request(const std::string& name);
    // What went wrong on the host's side, one line each ("" when nothing did).
    const std::string& note() const { return m_note; }

private:
    std::vector<workload::CoherencyFile> m_files;
    std::filesystem::path m_share;
    std::filesystem::path m_acks;
    std::set<std::string> m_done;
    std::string m_note;
};

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
// promise allows.
CoherencyCheck check_coherency(const core::CoherencyParams& params,
                               const std::vector<guest::StaleRecord>& records,
                               const core::Coherence& promise);

} // namespace rig::run
