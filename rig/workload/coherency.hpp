// SPDX-License-Identifier: MIT
// The coherency probe's files: written into the share before the boot, one per change the
// scenario lists. One after another, the guest reads a file, the server's side changes it
// (the host here, in the share; for a fuse cell the agent, in its daemon's folder, which
// is that cell's server), and the guest reads it again until it sees the change
// (guests/init).
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rig::workload {

// The folder of the share the files are in.
inline constexpr const char* k_coherency_folder = "coherency";

struct CoherencyFile {
    std::string name; // "c-0003", in k_coherency_folder
    core::Change change;
    std::string check; // the check that probes it (core::checks): its phase, "" at the end
};

// One file per listed change and check, in the order the guest probes them.
std::vector<CoherencyFile> coherency_files(const core::Workload& workload);

// The agent's job value: "c-0001:rewrite:build ... c-0003:rewrite c-0004:append", a file
// of a check after a phase naming that phase.
std::string coherency_plan(const core::Workload& workload);

// What a file holds before its change: one line "rig coherency NAME 1". A rewrite makes it
// "... 2", as long, in place; an append adds that line; a rename moves the file to
// NAME.moved; a delete removes it.
std::string coherency_content(const std::string& name, int version);

Expected<void> write_coherency_files(const std::filesystem::path& share,
                                     const core::Workload& workload);

// Makes one file's change in the share. The guest can write there too, so nothing it may
// have put in a file's place is followed: not a link for the folder, not one for the file.
Expected<void> apply_change(const std::filesystem::path& share, const CoherencyFile& file);

} // namespace rig::workload
