// SPDX-License-Identifier: MIT
// The filesystem table: one row per shared filesystem a cell can mount, saying everything
// rig does differently for it. Each row is a file of its own in core/fs/ that registers
// itself; the layers above switch on the row's data, never on a filesystem's name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

struct Cell;

// How the hypervisor hands the work folder to the guest (vm::ShareKind is this type).
enum class ShareKind { v9p, virtiofs };

// Who serves the work share besides the hypervisor.
enum class Daemon {
    none,      // QEMU itself
    host,      // a daemon the hypervisor starts on the host per share (virtiofsd)
    guest_fuse // rig-fuse inside the guest, over a copy of a 9p share (guests/fuse)
};

// Where the work share's request counts come from when guest.count_9p asks for counts.
enum class Counter {
    ninep_trace,   // QEMU's 9p trace (vm/protocol_trace.hpp): 9p.work.<type>
    virtiofsd_log, // virtiofsd's request log (vm/virtiofsd_log.hpp): virtiofs.<type>
    guest_daemon,  // the guest's daemon counts and the agent reports them: fuse.<op>
};

// How the guest agent (guests/init) mounts the work share: its job's WORK_MOUNT.
enum class GuestMount {
    kernel,     // mount -t <fstype> -o <options> <tag> <mount point>
    guest_fuse, // mount the 9p share, copy it into the guest, serve the copy with rig-fuse
};

// A cache mode: the `cache` axis value, and how the guest's /proc/mounts spells it.
struct CacheMode {
    std::string_view name;
    // 9p before Linux 6.4 prints a bare word ("loose"), and nothing for the mode whose
    // word is empty; from 6.4 it prints cache=<bit mask> (fs/9p/v9fs.h). Empty: never shown.
    std::string_view word;
    std::string_view mask;
};

// An axis the daemon takes as an argument: a seconds axis gives `option VALUE`, a
// boolean one the bare option when true.
struct DaemonOption {
    std::string_view axis;
    std::string_view option;
    bool flag;
};

// What a cell's mount promises about a change the server's side makes to a file the guest
// has read (the coherency probe, workload/coherency.hpp): that the guest sees it at once,
// within `seconds` (the timeouts it may cache names and attributes for), or nothing.
struct Coherence {
    enum class Promise { immediate, within, none };
    Promise promise = Promise::none;
    double seconds = 0;
};
std::string_view to_string(Coherence::Promise promise); // "immediate", "within", "none"
// "immediate", "within 1 s", "none": as reports print it.
std::string describe(const Coherence& coherence);

struct Filesystem {
    // The `fs` axis value: stored as is and part of cell ids, so never renamed.
    std::string_view name;
    // Where the filesystem comes in lists (help, error messages): lower first.
    int listed = 0;
    // The `cache` axis' values, in the order messages list them; none: no cache axis.
    std::vector<CacheMode> caches;
    // What a cell without a cache gets, as the daemon names it ("" where nothing is passed).
    std::string_view default_cache;
    // Axes that apply to this filesystem alone (core/axis.cpp): msize, fuse's knobs.
    std::vector<std::string_view> axes;
    ShareKind share = ShareKind::v9p;
    Daemon daemon = Daemon::none;
    // The daemon's program name, as mount_requested records it.
    std::string_view daemon_name;
    std::vector<DaemonOption> daemon_options;
    Counter counter = Counter::ninep_trace;
    // The guest's recipe: how it mounts, its mount -t type, and its -o options.
    GuestMount mount = GuestMount::kernel;
    std::string_view fstype;
    std::string (*mount_options)(const Cell& cell) = nullptr;
    // The mount names the share in its attach (aname=<tag>), so that the host's 9p trace
    // tells the shares apart.
    bool names_share = false;
    // The counter reads a stream of the work share alone, so the agent marks phase
    // boundaries in the work share as well as in the marking share.
    bool marks_in_share = false;
    // /proc/mounts shows the msize and cache the mount got (negotiated_options).
    bool shows_negotiated = false;
    // Kernel modules beyond the virtio and 9p ones every guest loads for its root share.
    std::vector<std::string> modules;
    // What a cell of this filesystem promises about the server's changes (see Coherence).
    Coherence (*coherence)(const Cell& cell) = nullptr;
    // Words that mark a kernel log line as this filesystem's (core/evidence.cpp).
    std::vector<std::string_view> log_words;
    // Globs of the guest kernel functions that are this filesystem's client, which
    // `guest: {profile: [NAME]}` counts (core/profile.hpp).
    std::vector<std::string_view> functions;
};

// Adds a row to the table; a static object of each row file (core/fs/), or of a test.
// Names are unique: a second row of a name is a programming error (assert).
struct FsRegistrar {
    explicit FsRegistrar(Filesystem row);
};

// Every row, in `listed` order.
const std::vector<const Filesystem*>& filesystems();
const Filesystem* find_fs(std::string_view name);
// The filesystem of a matrix without an `fs` axis.
inline constexpr std::string_view k_default_fs = "9p";
const Filesystem& default_fs();
const std::vector<std::string>& fs_names();

std::vector<std::string> valid_caches(const Filesystem& fs);
// Whether the `cache` axis means anything for fs.
bool has_cache_axis(const Filesystem& fs);
bool is_valid_cache(const Filesystem& fs, std::string_view cache);
// The cell's cache mode, or the filesystem's default when it names none.
std::string cache_or_default(const Cell& cell);

// The cell's promise, from its filesystem's row (none for a row that makes none).
Coherence coherence(const Cell& cell);

// The -o options the guest mounts the work share with ("" for none).
std::string work_mount_options(const Cell& cell);
// The daemon's arguments from the cell's axes, in the row's order; an axis the cell does
// not set is left to the daemon's default.
std::vector<std::string> daemon_arguments(const Cell& cell);
// What a sample records as the mount rig asked for: the mount options, or the daemon
// with its cache mode or arguments.
std::string mount_requested(const Cell& cell);

// What /proc/mounts says a mount really got, for a filesystem that shows it.
struct Negotiated {
    std::optional<uint64_t> msize;
    std::string cache;
};
Negotiated negotiated_options(const Filesystem& fs, std::string_view mount_options);

// Below this the 9p transport cannot carry a single request header plus payload.
inline constexpr uint64_t k_min_msize = 4096;

} // namespace rig::core
