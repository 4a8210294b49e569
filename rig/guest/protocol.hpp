// SPDX-License-Identifier: MIT
// The guest agent's result channel: "RIG <type> <fields>" lines, parsed defensively.
// The format is described in guests/README.md.
#pragma once

#include "core/sample.hpp"
#include "core/scenario.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rig::guest {

// A field the agent writes as it is: guests/README.md's [A-Za-z0-9_.:/%+,=-]+. Metric
// names and units must be tokens: every report prints them and JSON takes UTF-8 only.
bool is_token(std::string_view text);

struct Record {
    std::string type;
    std::vector<std::string> fields;
};

// Splits the channel's byte stream into records. Lines longer than the agent ever
// writes, or not starting with "RIG ", are junk: counted and dropped, never kept.
class ChannelParser final {
public:
    static constexpr size_t k_max_line = 4096;
    std::vector<Record> feed(std::string_view bytes);
    size_t junk_lines() const { return m_junk; }

private:
    std::string m_partial;
    bool m_discarding = false;
    size_t m_junk = 0;
};

// One phase of a workload as the agent ran it.
struct PhaseRecord {
    std::string name;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    int exit_status = 0;
    double seconds() const { return end_ns > start_ns ? (end_ns - start_ns) / 1e9 : 0; }
};

// One file of the coherency probe as the guest watched it after the server's change: how
// many reads still gave the old state, and how long until the first that gave the new.
struct StaleRecord {
    std::string name;
    uint64_t stale_reads = 0;
    uint64_t stale_ns = 0; // from the change to the first fresh read, or the whole window
    bool fresh = false;    // the change was seen within the window
};

// A check after a phase (guests/init, check_at), during which the workload pauses: its
// time is in no figure.
struct Pause {
    uint64_t start_ns = 0;
    std::optional<uint64_t> end_ns; // none until it resumes
};

// What the agent reported, assembled from records. Every list is capped, so a guest
// that floods the channel cannot grow rig's memory.
struct AgentReport {
    static constexpr size_t k_max_mounts = 64 * 1024; // bytes of mounts_text
    static constexpr size_t k_max_tail = 64 * 1024;   // bytes of tail
    static constexpr size_t k_max_kernel_log = 1024 * 1024;
    static constexpr size_t k_max_outputs = 1024 * 1024; // bytes of each outputs manifest
    // The guest's counters and a function profile (up to 200 functions, core/profile.hpp)
    // for the window and each phase, and the workload's own (guests/init caps those at
    // 1000).
    static constexpr size_t k_max_metrics = 3000;
    static constexpr size_t k_max_phases = 64;
    static constexpr size_t k_max_module_failures = 100;
    static constexpr size_t k_max_coherency = core::k_max_coherency_changes; // files of the probe

    bool hello = false;
    std::string kernel_release;
    std::optional<uint64_t> boot_ns;
    std::optional<uint64_t> start_ns;
    std::optional<uint64_t> end_ns;
    std::optional<int> exit_status;
    std::optional<uint64_t> output_bytes;
    std::string mounts_text; // /proc/mounts as the guest saw it
    std::string tail;        // last bytes of workload output
    std::string kernel_log;  // the whole kernel log, sent when the workload or setup failed
    // sha256sum's lines for the workload's outputs: as the guest saw them through its
    // caches, and (fuse cells) as its daemon serves them; each set once it is whole.
    std::string outputs_text;
    std::string served_text;
    bool outputs_hashed = false;
    bool served_hashed = false;
    // The same at each check after a phase, by that phase.
    std::map<std::string, std::string> outputs_at;
    std::map<std::string, std::string> served_at;
    // Checks after a phase whose server's copy the guest asks the host to hash now.
    std::vector<std::string> hash_requests;
    std::vector<Pause> pauses;
    std::vector<core::Metric> metrics;
    std::vector<PhaseRecord> phases;
    std::vector<std::string> module_failures;
    // The coherency probe: the files whose change the guest asked the host for, in order,
    // and what it saw of each.
    std::vector<std::string> change_requests;
    std::vector<StaleRecord> stale;
    std::optional<std::string> setup_error; // "mount-work: <message>"
    bool done = false;
    size_t malformed = 0; // RIG lines that did not parse

    void apply(const Record& record);
    bool paused() const { return !pauses.empty() && !pauses.back().end_ns; }
    // From start to end, the pauses left out; 0 when start/end are missing.
    double workload_seconds() const;
    std::vector<std::string> mounts() const;
};

// The /proc/mounts line whose mount point is `mount_point`.
struct MountLine {
    std::string source;
    std::string mount_point;
    std::string fstype;
    std::string options;
};
std::optional<MountLine> find_mount(const std::vector<std::string>& mounts,
                                    std::string_view mount_point);

} // namespace rig::guest
