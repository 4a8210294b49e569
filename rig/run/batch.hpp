// SPDX-License-Identifier: MIT
// Samples as batch jobs on a Slurm cluster: a job file per sample in the shared folder, a
// job array per submission, each record ingested as its task ends. A task the cluster
// ended (cancelled, node failure, preemption, time limit) or whose sample failed as infra
// is retried, up to a bound; it never becomes a kernel result.
#pragma once

#include "core/sample.hpp"
#include "core/scenario.hpp"
#include "run/sample.hpp"
#include "run/worker.hpp"
#include "sched/slurm.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace rig::run {

struct BatchSettings {
    std::filesystem::path jobs_dir; // job files, records and Slurm's output; shared
    std::filesystem::path program;  // rig's binary, at this path on every node
    std::filesystem::path cwd;      // the tasks' working directory; shared
    // The run's jobs carry this name, so that a coordinator killed with -9 finds them on
    // resume. Unique per database and run.
    std::string job_name;
    sched::JobOptions options;
    int infra_retries = 3; // attempts after the first, per sample
    // The cluster; null: Slurm's commands (sched::slurm_cluster). Unit tests give a fake.
    sched::Cluster* cluster = nullptr;
    // squeue is cheap, but every call is an RPC to slurmctld: a few seconds between polls
    // costs a sample (minutes long) almost nothing.
    std::chrono::milliseconds poll{std::chrono::seconds(2)};
    // What the polls and the wait after scancel sleep on; unit tests give a fake.
    util::Clock* clock = &util::real_clock();
};

// One sample. `index` is stable across resumes (a resumed coordinator maps the tasks it
// finds back to samples by it) and unique within the job name. The job's attempt and
// record are filled in here.
struct BatchSample {
    int index = 0;
    SampleJob job;
    std::string label; // for progress lines
};

struct BatchEvents {
    // A sample with a result (or an infra error past the retry bound), to store.
    std::function<Expected<void>(const core::Sample&)> finished;
    std::function<void(const std::string&)> note;
    std::function<void(size_t queued, size_t running, size_t done)> counts;
};

// Runs `samples` to the end. Tasks of an earlier coordinator of the same job name are
// adopted when they are still queued or running, and their records ingested when they
// ended; tasks of samples not asked for are cancelled. On interrupt the run's tasks are
// cancelled and what finished before is stored. A job sbatch refuses is a config error
// that names the scenario key (file:line:col).
Expected<void> run_batch(const core::Scenario& scenario, std::vector<BatchSample> samples,
                         const BatchSettings& settings, const std::atomic<bool>& interrupted,
                         const BatchEvents& events);

// Links (or copies, across file systems) a kernel's boot image and base initramfs into
// shared/kernels/ID, once: nodes need not see the coordinator's kernel cache. Returns
// their shared paths, in that order.
Expected<std::pair<std::filesystem::path, std::filesystem::path>>
share_kernel(const std::string& id, const std::filesystem::path& boot_image,
             const std::filesystem::path& base_initrd, const std::filesystem::path& shared);

// One sample as a one-task job, waited for: for a caller that decides sample by sample (a
// bisect). The context's dir must be in the shared folder. The task's index is that of an
// earlier job file of the same cell and repetition, so that a caller resumed after a kill
// adopts the task it left. An interrupted wait gives an aborted sample.
Expected<core::Sample> run_batch_one(const SampleContext& context, const BatchSettings& settings,
                                     const std::filesystem::path& shared,
                                     const std::atomic<bool>& interrupted,
                                     const std::function<void(const std::string&)>& note);

// What the scenario's `slurm:` keys ask of each job; each task gets the guest's CPUs.
sched::JobOptions job_options(const core::Scenario& scenario);

// The name of the jobs of a run ("run4") or a bisect ("bisect2") of a database:
// "rig-" + 8 hex digits of the database's absolute path and the run's start time + "-" +
// the tag. The start time tells apart a run of a database made afresh at the same path,
// whose old jobs a cluster may still list.
std::string batch_job_name(const std::filesystem::path& db, const std::string& started_at,
                           const std::string& tag);

} // namespace rig::run
