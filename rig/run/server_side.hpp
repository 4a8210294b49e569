// SPDX-License-Identifier: MIT
// The server's side of a kernel-mounted share while its guest runs: the coherency probe's
// changes (workload/coherency.hpp) and, at a check after a phase, the share's outputs
// hashed (run/outputs.hpp), each when the guest asks and then acknowledged by a file of
// its name in the uncached ack share, which the guest polls.
#pragma once

#include "core/scenario.hpp"
#include "run/outputs.hpp"
#include "workload/coherency.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rig::run {

// A request for anything the workload does not plan, or for one thing a second time, does
// nothing.
class ServerSide final {
public:
    ServerSide(const core::Workload& workload, std::filesystem::path share,
               std::filesystem::path acks);

    // Makes the change of the probe's file `name`; acknowledged as `name`.
    void change(const std::string& name);
    // Hashes the outputs as the share holds them at the check after phase `check`;
    // acknowledged as "hash-CHECK".
    void hash(const std::string& check);

    // The share's outputs at the check after `check`; nullptr when not hashed.
    const Manifest* manifest_at(const std::string& check) const;
    // What went wrong on the host's side, one line each ("" when nothing did).
    const std::string& note() const { return m_note; }

private:
    void acknowledge(const std::string& name);

    std::vector<workload::CoherencyFile> m_files;
    std::vector<std::string> m_globs;
    std::vector<std::string> m_checks; // core::paused_phases
    std::filesystem::path m_share;
    std::filesystem::path m_acks;
    std::set<std::string> m_done;
    std::map<std::string, Manifest> m_manifests;
    std::string m_note;
};

} // namespace rig::run
