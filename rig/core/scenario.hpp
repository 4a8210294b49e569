// SPDX-License-Identifier: MIT
// The scenario: what the user declared in YAML, as plain domain types.
#pragma once

#include "core/status.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

// A position in the scenario file, 1-based; line 0 means "unknown".
struct Loc {
    int line = 0;
    int column = 0;
};

// A value with the place it was written and its key path ("matrix.cache[2]").
struct Located {
    std::string value;
    Loc loc;
    std::string path;
};

enum class KernelSource { debian, image, git };
std::string_view to_string(KernelSource source);

// `debian: linux-image-MAJOR.MINOR` names a series (its newest image package when run),
// not one package.
bool is_debian_series(std::string_view name);

struct Kernel {
    std::string name;
    KernelSource source = KernelSource::debian;
    std::string package;              // debian: a series, metapackage or package
    std::string flavour;              // debian series: amd64 when empty
    std::string image;                // image: path to a bzImage
    std::string modules;              // image: optional modules folder
    std::string build;                // image: the kernel's build folder, for `module:` workloads
    std::string repo;                 // git: repository path
    std::string ref;                  // git: any rev git understands
    std::vector<std::string> config;  // git: fragments applied to every cell
    std::vector<std::string> patches; // git: patch/mbox files for `git am`
    // git: a posted series (an mbox or a folder of patches, kernel/series.hpp), applied
    // after `patches` in the cells of the `series` axis' `with`.
    std::string series;
    std::map<std::string, std::string> options; // git: extra CONFIG_X: y|m|n|value
    Loc loc;
    std::string path; // "kernels[2]"

    // Text that identifies what is built or fetched; the name is included because
    // two entries with the same source are distinct series in a report.
    std::string canonical() const;
};

// One axis of the matrix as written: its name and values, in file order.
struct AxisValues {
    std::string name;
    std::vector<Located> values;
    // Only for `cache`, which may be given per fs: {9p: [...], virtiofs: [...]}.
    std::map<std::string, std::vector<Located>> by_fs;
    Loc loc;
};

// An include or exclude entry: axis (or "kernel") -> accepted values.
struct Rule {
    std::map<std::string, std::vector<Located>> match;
    Loc loc;
    std::string path;
};

// module: an out-of-tree kernel module built against each cell's kernel and loaded by
// the guest agent; its printk output is the workload's output. readback: files of known
// content written on each side of the share and read back on the other.
enum class WorkloadKind { generate, tree, command, module, readback };

struct GenerateParams {
    int units = 40;     // translation units
    int headers = 3;    // shared headers every unit includes
    int functions = 20; // functions per unit
};

// A readback workload (workload/readback.hpp): the guest writes `files` files of about
// `bytes` each through the share, the host as many before the sample; each side's are
// checked on the other.
struct ReadbackParams {
    int files = 8;
    uint64_t bytes = 256 * 1024; // rounded up to whole lines
};

// How the server's side changes a file of the coherency probe (workload/coherency.hpp).
enum class Change { rewrite, append, rename, remove };
std::string_view to_string(Change change); // "rewrite", "append", "rename", "delete"
std::optional<Change> parse_change(std::string_view text);
const std::vector<Change>& all_changes(); // in the order tables list them
std::vector<std::string> change_words();

// The most changes a sample's probes make (files, over all its checks): the scenario
// reader's bound, and the agent report's on the records it keeps.
inline constexpr size_t k_max_coherency_changes = 64;

// The coherency probe: at each check (checks(): the workload's end, and after the phases
// of check_after), one file per entry of `changes`, in turn, is read by the guest, changed
// on the server's side and read again until the guest sees the change or `window` has
// passed (stale.* metrics). Off when `changes` is empty.
struct CoherencyParams {
    std::vector<Change> changes;
    std::chrono::milliseconds window{3000};
    bool enabled() const { return !changes.empty(); }
};

// The probe's metrics, which run/coherency.hpp records and the report's coherency table
// reads: "stale.seconds" for all files, "stale.rewrite.seconds" for one kind of change.
inline constexpr std::string_view k_stale_prefix = "stale.";
inline constexpr std::string_view k_stale_broken = "stale.broken";
std::string stale_metric(std::optional<Change> change, std::string_view figure);

// One step of a workload, timed and counted on its own: a cold build, a no-op rebuild
// (the stat storm a cache should absorb), a rebuild after touching one header.
struct WorkloadPhase {
    std::string name; // is_phase_name: it names metrics ("noop/seconds") and a guest file
    std::string command;
};

// A phase's name: 1 to k_max_phase_name of [A-Za-z0-9_-], so that it is safe as a guest
// file name, a word of the agent's loop and a metric prefix ("noop/seconds"), and no
// metric name's own part before a '/' (a path class, "fuse.path.open:include/%.h") is one.
inline constexpr size_t k_max_phase_name = 32;
bool is_phase_name(std::string_view name);

struct Workload {
    WorkloadKind kind = WorkloadKind::generate;
    GenerateParams generate;
    std::string tree;    // tree: host folder copied fresh into the share per sample
    std::string command; // run by the guest's sh in the share; unused when there are phases
    std::vector<WorkloadPhase> phases; // run in order, each in the same share
    // module: one .c file or a folder with a Kbuild file, and its parameters (name,
    // value), passed to insmod in this order.
    std::string module;
    std::vector<std::pair<std::string, std::string>> module_params;
    ReadbackParams readback;
    CoherencyParams coherency;
    // Shell globs, relative to the share, of what the workload produces: hashed by the
    // guest through its caches and on the server's side after the sample (run/outputs.hpp).
    // Empty: the kind's own (output_globs).
    std::vector<std::string> outputs;
    // Phases after which the outputs are hashed and the coherency probe runs too, besides
    // the workload's end: each such check pauses the workload, outside every figure.
    std::vector<std::string> check_after;
    std::string canonical() const;
};

// The checks a sample makes, in the order it makes them: one after each phase of
// `check_after` but the last (in phase order), then the end's, which is "". Without
// check_after there is only the end's.
std::vector<std::string> checks(const Workload& workload);
// The phases the workload pauses after to check, in order (checks() but the end's).
std::vector<std::string> paused_phases(const Workload& workload);
// What names a check's figures and lines: "" when the workload checks only at its end,
// else the phase it follows ("build/stale.seconds"), the end's being the last phase.
std::string check_prefix(const Workload& workload, const std::string& check);

// What a workload's outputs are checked by: its `outputs`, else its kind's (the generated
// project's objects and program, the readback files), else nothing.
std::vector<std::string> output_globs(const Workload& workload);

// A glob of `outputs`: 1 to 200 of [A-Za-z0-9_.*?/-], relative, no '..', no empty or '.'
// component and no wildcard in one that starts with '.', so that it is a safe word of the
// agent's shell and matches only beneath the share.
bool is_output_glob(std::string_view glob);

// The accelerator a scenario asks for (`guest: {accel: ...}`); auto lets the host decide.
enum class Accel { auto_detect, kvm, tcg };
std::string_view to_string(Accel accel); // "auto", "kvm", "tcg"
std::optional<Accel> parse_accel(std::string_view text);
// The requests' words in their order, for a "did you mean".
std::vector<std::string> accel_words();

// The accelerator a guest runs under, once the host that boots it has decided. Samples
// store it as text ("kvm", "tcg").
enum class Accelerator { kvm, tcg };
std::string_view to_string(Accelerator accelerator);
Expected<Accelerator> parse_accelerator(std::string_view text);

// The machine QEMU gives a guest: q35 (PCI, firmware, HPET), or microvm (no PCI, devices on
// virtio-mmio found through ACPI, no firmware), a few tenths of a second quicker to boot
// under TCG. Like the accelerator it is not part of the cell: the guest's filesystem,
// counts and outcomes are the same on both (vm/qemu.hpp says where each is used).
enum class Machine { q35, microvm };
std::string_view to_string(Machine machine);

struct Guest {
    uint64_t memory_mib = 1024;
    int cpus = 2;
    Accel accel = Accel::auto_detect;
    // `machine: q35` pins q35; by default (nullopt, `auto`) the QEMU backend boots microvm
    // where the kernel can (run/sample_launch.hpp, machine_for). Not part of the cell.
    std::optional<Machine> machine;
    // Count 9p requests from QEMU's trace (vm/protocol_trace.hpp). Off only to measure
    // what counting costs; like the accelerator it is not part of the cell.
    bool count_9p = true;
    // A sparse file of this many bytes attached as a virtio-blk disk, fresh per sample
    // (the agent names it /dev/rig-scratch); 0 = none. Part of the cell: a benchmark on
    // a disk is another experiment than one without.
    uint64_t scratch_bytes = 0;
    // Host folders the guest sees read-only besides its root (guest/root.hpp), at the same
    // paths: whatever a workload needs that a compile does not. Part of the cell.
    std::vector<std::string> host_paths;
    // The most the workload may write to its share: a tmpfs of this size when rig is root
    // (run/share_mount.hpp); past it, the sample is disk-quota. A limit, not the cell's.
    uint64_t share_limit = uint64_t{4} << 30;
    // Guest kernel functions whose calls the guest counts (core/profile.hpp): set names
    // and globs as written. Part of the cell: the probes cost time.
    std::vector<std::string> profile;
    std::string canonical() const;
};

struct Timeouts {
    std::chrono::milliseconds boot{std::chrono::minutes(2)};
    std::chrono::milliseconds workload{std::chrono::minutes(20)};
    std::chrono::milliseconds silence{std::chrono::minutes(5)};
};

// backend slurm: what each sample's batch job asks of the cluster. Values keep where
// they were written, so that a job sbatch refuses names its key in the scenario.
struct Slurm {
    std::optional<Located> partition; // "" = the cluster's default partition
    std::optional<Located> account;
    std::optional<Located> constraint; // node features, such as kvm
    std::optional<Located> time;       // the job's time limit, as written
    std::optional<std::chrono::minutes> time_limit;
    bool exclusive = true;       // a node to itself: timings of a shared node do not compare
    std::vector<Located> sbatch; // more sbatch arguments, each one argument
    // The folder every node sees: job files, kernels, samples. "" = the results folder.
    std::string shared;
    Loc loc; // of the `slurm` key, or of `backend` when there is none
};

// `watch:`: the branch `rig watch` follows, how it judges each new head against the heads
// before it, and where its reports go.
struct Watch {
    std::string kernel; // the git kernel entry whose branch is followed
    // Fetched from (a path or any URL git fetches) into the entry's repository, under
    // refs/rig/watch/BRANCH; "" reads BRANCH of the entry's repository itself.
    std::string repo;
    std::string branch;
    std::chrono::seconds interval{std::chrono::minutes(10)}; // between rounds
    // errors, duration[:+N%], metric:NAME[:+N%]: the bisect's criteria, checked by watch/
    // (where they are parsed) at the place they were written.
    std::vector<Located> criteria;
    // Only heads whose new commits touch one of these (git pathspecs) are tested.
    std::vector<std::string> paths;
    // A fixed revision each head is also held against, so that small steps cannot add up
    // past a threshold unseen; "" none.
    std::string reference;
    int samples = 3; // of the last good head and the new one, when a suspect is confirmed
    int max_bisect_samples = 10; // per commit of a bisect (its --max-samples)
    // Each bisect's cost cap (its --max-builds, --max-boots, --max-hours); reaching it is
    // logged and leaves the head suspect. Unattended, a bisect must end.
    int max_bisect_builds = 30;
    int max_bisect_boots = 300;
    std::chrono::seconds max_bisect_time{std::chrono::hours(12)};
    std::string outbox;            // reports, one mbox file each; relative to the file
    std::vector<std::string> send; // a command given each report's path; none: kept
    std::string from;              // the robot's identity: "Name <address>"
    std::vector<std::string> cc;   // lists; with regressions@lists.linux.dev regzbot acts
    std::string archive;           // the list archive's URL: Closes: ARCHIVE/MESSAGE-ID
    // The folder whose index.html shows heads, regressions and trends; relative to the
    // file, "" for none.
    std::string dashboard = "dashboard";
    Loc loc;
};

struct Scenario {
    std::string file; // path as given, for messages
    // The absolute folder relative paths resolve from (git repositories, patches, fragments,
    // a module): the file's, or where a stored run wrote the inputs it keeps.
    std::string dir;
    std::string text; // the YAML as read, stored with each run
    std::string name;
    std::vector<Kernel> kernels;
    std::vector<AxisValues> matrix;
    Loc matrix_loc;
    std::vector<Rule> exclude;
    std::vector<Rule> include;
    Workload workload;
    int repeat = 1;
    int warmup = 0;
    // Guests at once on each host (rig run --jobs), each on CPUs of its own.
    int jobs = 1;
    Loc jobs_loc;
    Guest guest;
    Timeouts timeouts;
    Backend backend = Backend::qemu;
    std::string uri = "qemu:///system";
    std::vector<std::string> hosts;
    Slurm slurm;
    std::optional<Watch> watch;
};

} // namespace rig::core
