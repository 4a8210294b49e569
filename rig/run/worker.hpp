// SPDX-License-Identifier: MIT
// The worker contract, free of any scheduler: a job file describes one sample completely,
// `rig sample JOBFILE` runs it on whatever machine sees the shared folder, and writes the
// sample's whole record where the coordinator reads it. The worker never opens the
// results database: the coordinator alone writes it (SQLite on shared storage with
// writers on several nodes is unsafe).
#pragma once

#include "core/cell.hpp"
#include "core/cell_record.hpp"
#include "core/sample.hpp"
#include "core/scenario.hpp"
#include "util/error.hpp"

#include <atomic>
#include <filesystem>
#include <string>

namespace rig::run {

// One sample, as a file. JSON, version k_job_format; paths are absolute and must mean the
// same on every node (the shared folder).
struct SampleJob {
    // The cell, and the workload, guest shape and timeouts its samples run with (the
    // record's kernel part is not needed: the kernel comes built, below). The cell itself
    // rather than its id: a bisect's cells (its commits) are not in the scenario's matrix.
    core::CellRecord cell;
    int repetition = 0;
    // The kernel artifact: its cache id, the image guests boot and its base initramfs.
    std::string kernel_id;
    std::filesystem::path boot_image;
    std::filesystem::path base_initrd;
    std::filesystem::path dir; // the sample's folder: logs, share, job archive
    // How the node boots the guest: QEMU directly, or the libvirt daemon at `uri`.
    core::Backend hypervisor = core::Backend::qemu;
    std::string uri;
    int attempt = 0;              // 0 first, then each infra retry
    std::filesystem::path record; // where the record goes
};

Expected<void> write_job(const std::filesystem::path& path, const SampleJob& job);
Expected<SampleJob> read_job(const std::filesystem::path& path);

// The record: every field of the sample (outcome, durations, CPU, mounts, error lines with
// signatures, metrics, evidence) and the node that ran it. Written atomically, so a
// coordinator that sees the file sees all of it.
Expected<void> write_record(const std::filesystem::path& path, const core::Sample& sample,
                            const std::string& node);
Expected<core::Sample> read_record(const std::filesystem::path& path);

// Runs the job's sample through run_sample, the function every backend's samples go
// through, on the hypervisor the job names. Only a job that cannot be understood is an
// Error; a guest that fails is a sample.
Expected<core::Sample> run_job(const SampleJob& job, const std::atomic<bool>& interrupted);

} // namespace rig::run
