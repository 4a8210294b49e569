// SPDX-License-Identifier: MIT
// The job a guest runs: /etc/rig/job (KEY=VALUE) and /etc/rig/workload.sh, as a small
// cpio archive appended to the kernel's base initramfs.
#pragma once

#include "core/cell.hpp"
#include "util/error.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace rig::guest {

// The share tags and mount point the agent and the hypervisor agree on. The guest root's
// shares (guest/root.hpp): the host's /usr, rig's copy of /etc, and a scenario's host
// paths, tagged k_host_path_tag and their index.
inline constexpr const char* k_usr_tag = "rootusr";
inline constexpr const char* k_etc_tag = "rootetc";
inline constexpr const char* k_host_path_tag = "hostpath";
inline constexpr const char* k_work_tag = "work";
// An empty 9p share the agent looks names up in to mark phase boundaries for the host's
// 9p trace (vm/protocol_trace.hpp).
inline constexpr const char* k_mark_tag = "rigmark";
// An empty 9p share, uncached, in which the host acknowledges each change of the
// coherency probe that it made (a file named after the changed one), and each check's hash.
inline constexpr const char* k_ack_tag = "rigack";
// How long the agent waits for an acknowledgement (its job's ACK_WAIT_MS) before it goes
// on without: what the host does later comes too late to count.
inline constexpr std::chrono::milliseconds k_ack_wait{10000};
// Under /run, a tmpfs in the guest: the read-only host root needs no mount point.
inline constexpr const char* k_work_mount_point = "/run/rig/work";
// Where a fuse cell's rig-fuse runs in the guest root: the agent copies it there from the
// job archive, since the guest puts a tmpfs over the host's /tmp (a build tree there
// would be hidden) and a remote libvirt host has no rig tree at all.
inline constexpr const char* k_fuse_daemon_path = "/run/rig/rig-fuse";
inline constexpr const char* k_fuse_daemon_archive_path = "etc/rig/rig-fuse";
// Where the scratch disk appears, in the agent's /dev and in the workload's.
inline constexpr const char* k_scratch_dev = "/dev/rig-scratch";
inline constexpr const char* k_module_archive_path = "etc/rig/workload.ko";

struct Job {
    std::string run_label; // shows in the agent's hello record
    // The cell's filesystem, whose row says how the agent mounts the work share.
    const core::Filesystem* fs = &core::default_fs();
    // The machine the guest boots on, whose virtio transport the agent loads.
    core::Machine machine = core::Machine::q35;
    std::string work_options;                 // -o for the work mount (core::work_mount_options)
    std::chrono::seconds workload_timeout{0}; // the guest's own backstop; 0 = none
    std::string workload_script;              // run by the guest's sh in the share
    // Phases instead of the one script: name and script, run in order.
    std::vector<std::pair<std::string, std::string>> phase_scripts;
    bool mark_phases = false; // mount the marking share and mark each phase boundary
    // A scratch disk is attached: the agent loads its driver and names it k_scratch_dev.
    bool scratch = false;
    // Globs of the kernel functions whose calls the agent counts (core/profile.hpp).
    std::vector<std::string> profile_globs;
    // Globs of what the workload produces (core::output_globs): the agent hashes them
    // through its caches after the workload, and a fuse cell's daemon's source too.
    std::vector<std::string> outputs;
    // The coherency probe (workload/coherency.hpp): "NAME:CHANGE[:PHASE] ..." and how long
    // the guest watches each file for its change; empty when off.
    std::string coherency;
    std::chrono::milliseconds coherency_window{0};
    // Phases after which the agent pauses to check (core::paused_phases): it probes, hashes
    // the outputs and asks the host to hash the server's copy, outside every figure.
    std::vector<std::string> check_after;
    // A module workload: the built module (its bytes go into the job archive) and its
    // parameters, which the agent passes to insmod as NAME=VALUE arguments.
    std::filesystem::path module;
    std::vector<std::pair<std::string, std::string>> module_params;
    // fuse cells: the daemon's host path (its bytes go into the job archive) and its knob
    // options, whitelisted tokens the agent checks one by one.
    std::filesystem::path fuse_daemon;
    std::vector<std::string> fuse_args;
    // The guest root: 9p shares by tag and where each is mounted, and the links of /.
    std::vector<std::pair<std::string, std::string>> root_shares;
    std::vector<std::pair<std::string, std::string>> root_links;
};

// Whether the job needs the ack share, by which the host answers the coherency probe's
// changes and a check's hash of the server's copy: it does unless a fuse cell's daemon in
// the guest is the server.
bool wants_ack_share(const Job& job);

// Whether a share tag is tagged as one of the guest root's shares (their requests count
// together, as the root's).
bool is_root_tag(std::string_view tag);

// Values travel as KEY=VALUE lines: a newline in one is refused, never escaped.
Expected<std::string> job_file(const Job& job);
Expected<std::string> job_archive(const Job& job);

} // namespace rig::guest
