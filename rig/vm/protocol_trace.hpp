// SPDX-License-Identifier: MIT
// Exact 9p request counts per share, from QEMU's own trace events.
//
// Why QEMU's trace log: it is the server's view, so it counts every request the guest
// really sent, whatever the guest kernel's config (a tinyconfig kernel has no tracefs)
// and without a process between guest and QEMU. Debian's QEMU is built with the "log"
// trace backend; `-trace events=FILE -D LOG` turns on only the events below and writes
// them to LOG. The v9fs_* request events carry the message type but not the device, so
// each is tied to the virtqueue_pop line just before it: QEMU's 9p device pops a request
// and runs its handler up to the trace call before it pops the next one, all in the main
// loop. virtqueue_fill gives the reply's length, which is how many bytes an Rread
// carried. A request type QEMU 7.2 does not trace (statfs, unlinkat, renameat, ...) is a
// pop with no request line after it: counted, as "other".
//
// Shares are told apart by the `aname` each is mounted with (the agent passes its tag;
// QEMU's local backend ignores it otherwise). Windows between the guest's marks are told
// apart by the walks on a third, empty share that exists only for marking: the agent
// looks up one new name there at each phase boundary.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rig::vm {

// The events file for -trace events=FILE: one event name a line.
std::string protocol_trace_events();

struct ShareCounts {
    uint64_t requests = 0;
    std::map<std::string, uint64_t> by_type; // "walk", "getattr", "lopen", ..., "other"
    uint64_t read_bytes = 0;                 // data carried by Rread replies
    uint64_t write_bytes = 0;                // data carried by Twrite requests
};

// Requests between two consecutive marks, by share (the aname the share was mounted
// with).
using TraceWindow = std::map<std::string, ShareCounts>;

struct ProtocolCounts {
    std::set<std::string> shares;     // every share attached, the marking one aside
    int marks = 0;                    // marks seen
    std::vector<TraceWindow> windows; // windows[i]: between mark i+1 and mark i+2
};

// Counts cut into windows by marks, as every reader of a request log needs: nothing
// counts before the first mark, each mark closes the open window, and what follows the
// last mark (the agent's own collection) belongs to none.
class WindowedCounts final {
public:
    // The open window's counts of `share`; nullptr before the first mark.
    ShareCounts* open(const std::string& share);
    // Counts one request of `type` on `share`; nullptr before the first mark.
    ShareCounts* count(const std::string& share, const std::string& type);
    void mark();
    void add_share(const std::string& share) { m_counts.shares.insert(share); }
    ProtocolCounts finish() { return std::move(m_counts); }

private:
    ProtocolCounts m_counts;
    TraceWindow m_open;
};

// Reads a trace log written under protocol_trace_events(). `mark_aname` names the
// marking share. Lines that are not trace events (QEMU's own warnings) are skipped.
ProtocolCounts count_protocol_trace(std::string_view log, std::string_view mark_aname);
Expected<ProtocolCounts> read_protocol_trace(const std::filesystem::path& file,
                                             std::string_view mark_aname);

// The 9P2000.L name of a message type ("walk" for 110), or "type-N".
std::string ninep_type_name(int id);
// Every name ninep_type_name gives a known type, and "other", sorted.
std::vector<std::string> ninep_type_names();

} // namespace rig::vm
