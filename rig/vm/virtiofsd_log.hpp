// SPDX-License-Identifier: MIT
// Exact FUSE request counts of a virtiofs share, from virtiofsd's own debug log.
//
// Why the log: virtiofsd serves the guest's FUSE requests outside QEMU, so QEMU's trace
// does not see them, and the guest's FUSE connection keeps no counts. With -d the C
// virtiofsd logs one "unique: N, opcode: NAME (K), ..." line as each request arrives,
// and names every lookup ("lo_lookup(parent=P, name=NAME)"). The agent's marks are
// lookups of new names starting ".rig-mark-" in the share, which cut the log into the
// same windows as the 9p trace's (protocol_trace.hpp). libvirt starts virtiofsd itself
// and offers no way to pass -d: its virtiofs cells have no counts.
#pragma once

#include "util/error.hpp"
#include "vm/protocol_trace.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rig::vm {

// What the agent looks up in a virtiofs work share to mark a phase boundary.
inline constexpr std::string_view k_virtiofs_mark_prefix = ".rig-mark-";

// Windows of one share named `share`; the marks' own lookups are not counted.
ProtocolCounts count_virtiofsd_log(std::string_view log, const std::string& share);
Expected<ProtocolCounts> read_virtiofsd_log(const std::filesystem::path& file,
                                            const std::string& share);

// FUSE's request names as rig reports them, lower case ("lookup", "readdirplus"), and
// "other" for an opcode virtiofsd has no name for; sorted.
std::vector<std::string> fuse_request_names();

} // namespace rig::vm
