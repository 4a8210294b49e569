// SPDX-License-Identifier: MIT
// `rig run`: every cell x repetition of a scenario, after warmups, into the database.
#pragma once

#include "core/scenario.hpp"
#include "host/probe.hpp"
#include "run/kernel_provider.hpp"
#include "run/sample.hpp"
#include "sched/slurm.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "vm/hypervisor.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rig::run {

struct RunSettings {
    // Per-sample logs: results_dir/runs/<run>/... (core::results_folder: runs/ for rig.db,
    // FILE.runs/ for another database FILE).
    std::filesystem::path results_dir;
    std::filesystem::path cache_dir; // kernels and initramfs images
    bool tty = false;
    // backend slurm: samples run as batch jobs (run/batch.hpp), not on hosts.
    bool batch = false;
    std::filesystem::path shared;  // the folder every node sees; empty: results_dir
    std::filesystem::path program; // rig's binary, at this path on every node
    // The database: names the run's folder (above) and jobs (batch_job_name); "" in tests
    // is rig.db's layout.
    std::filesystem::path db;
    // Guests at once per host, each on a CPU set of its own; 0: the scenario's `jobs`.
    int jobs = 0;
    // The command line's --backend and --uri, stored with a new run (and `jobs`) so that
    // its resume carries on the same way; the caller has chosen `hosts` from them.
    std::optional<core::Backend> backend;
    std::vector<std::string> uris;
    // Where kernels come from; null: built and fetched into cache_dir and recorded
    // (make_kernel_provider). Unit tests hand in a fake.
    KernelProvider* kernels = nullptr;
    // How often a sample looks at its guest; unit tests of fake guests poll faster.
    Pacing pacing;
    // backend slurm: the cluster (null: Slurm's commands) and how often it is polled.
    sched::Cluster* cluster = nullptr;
    std::chrono::milliseconds batch_poll{std::chrono::seconds(2)};
    // The host's facts and accelerator, asked once per run; unit tests give a fake.
    host::Probe* probe = &host::local_probe();
    // What the run's start time, its progress line and the batch coordinator's polls
    // read; unit tests give a fake whose sleeps take no time.
    util::Clock* clock = &util::real_clock();
};

struct RunSummary {
    int64_t run_id = 0;
    size_t samples_run = 0;
    size_t samples_skipped = 0; // finished before a resume
    size_t samples_not_ok = 0;
    bool interrupted = false;
};

// Runs what `run_id`'s run still lacks; a fresh run when run_id is 0. Samples already
// stored are skipped, so a resumed run never repeats one. With settings.batch the
// samples go to the scheduler and `hypervisor` is unused.
Expected<RunSummary> run_scenario(const core::Scenario& scenario, store::Database& db,
                                  vm::Hypervisor& hypervisor, const RunSettings& settings,
                                  int64_t run_id, const std::atomic<bool>& interrupted,
                                  std::ostream& out);

// A place samples run: one libvirt endpoint (or the local QEMU), named by its URI.
struct Host {
    std::string name;
    vm::Hypervisor* hypervisor = nullptr;
};

// The same over several hosts: samples run concurrently, up to `jobs` per host at a time,
// each guest pinned to a CPU set of its own when jobs > 1, and a cell's samples spread over
// the sets (run/hosts.hpp). Too many jobs for a host's CPUs is a usage error (a config
// error at the scenario's `jobs:`) that says what fits. A host
// whose hypervisor is unreachable after an infra-error sample has dropped out: it is
// marked dropped in the run's hosts (store::RunHost) and its sample runs on another
// host. When every host is gone the run stays open for --resume. With settings.batch
// `hosts` may be empty.
Expected<RunSummary> run_scenario(const core::Scenario& scenario, store::Database& db,
                                  const std::vector<Host>& hosts, const RunSettings& settings,
                                  int64_t run_id, const std::atomic<bool>& interrupted,
                                  std::ostream& out);

} // namespace rig::run
