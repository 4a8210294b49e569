// SPDX-License-Identifier: MIT
// The Slurm client: submit a job array, follow its tasks, cancel them. Every command is an
// argument vector; Slurm's state names are parsed here and nowhere else.
#pragma once

#include "util/error.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::sched {

// A task's state, as squeue names it (JOB_STATE_CODES in squeue(1)).
enum class JobState {
    pending,
    running,
    completing,
    suspended,
    requeued,
    resizing,
    completed,     // the task's program exited 0
    failed,        // the task's program exited non-zero
    cancelled,     // scancel, by a user or an admin
    timeout,       // the time limit was reached
    node_fail,     // its node died
    preempted,     // a job of higher priority took the node
    boot_fail,     // the node did not boot
    deadline,      // --deadline passed
    out_of_memory, // the node's OOM killer
    unknown,       // a name this client does not know
};

std::optional<JobState> parse_job_state(std::string_view text);
std::string_view to_string(JobState state);

// How a state ends a task: not yet, by the task's own program (whatever it reported is
// its result), by the scheduler for reasons of its own (cancelled, a node that failed or
// did not boot, preemption, a deadline: the machinery failed, never the kernel under
// test, and another attempt may well succeed), or by the scheduler for what the task
// itself used: its time limit (TIMEOUT) or its memory (OUT_OF_MEMORY). Another attempt
// would use as much again, so those two are not worth retrying.
enum class TaskEnd { not_yet, by_program, by_scheduler, time_limit, out_of_memory };
TaskEnd task_end(JobState state);

// Whether the task waits for a node (queued) or holds one (running), for progress.
bool is_queued(JobState state);

// One task of an array job as squeue reports it.
struct TaskStatus {
    int64_t array_job = 0; // the id sbatch printed
    int index = 0;         // SLURM_ARRAY_TASK_ID
    JobState state = JobState::unknown;
    std::string reason; // why it waits, or why it ended
};

// What a job asks of the cluster; the scenario's `slurm:` keys.
struct JobOptions {
    std::string partition;  // "" = the cluster's default
    std::string account;    // ""
    std::string constraint; // node features, such as kvm
    std::optional<std::chrono::minutes> time_limit;
    bool exclusive = true;
    int cpus_per_task = 1;
    std::vector<std::string> extra; // more sbatch arguments, as given
};

// An array job whose task N runs `program sample jobs_dir/N.json`.
struct ArrayRequest {
    std::string name; // the job name; how a resumed coordinator finds its jobs
    std::vector<int> indices;
    std::filesystem::path program;
    std::filesystem::path jobs_dir;
    std::filesystem::path script; // the fixed batch script (write_batch_script)
    std::filesystem::path output; // Slurm's --output pattern (%A, %a)
    std::filesystem::path cwd;
    JobOptions options;
};

// Writes the batch script every array uses: it holds no data, only how task N finds its
// job file from its arguments and SLURM_ARRAY_TASK_ID.
Expected<void> write_batch_script(const std::filesystem::path& path);

// sbatch's argument vector for `request`, rig's own options last so that extra
// arguments cannot override them.
std::vector<std::string> sbatch_argv(const ArrayRequest& request);

// "0-3,7,9": Slurm's --array list for sorted, distinct indices.
std::string array_list(std::vector<int> indices);

// Why sbatch refused a job, and which option it objects to.
enum class RejectedOption { partition, account, constraint, time_limit, other };
struct Rejection {
    RejectedOption option = RejectedOption::other;
    std::string message; // sbatch's own words
};
// nullopt when sbatch's error is not a refusal of the job (slurmctld down, ...).
std::optional<Rejection> rejection(std::string_view sbatch_error);

struct Submitted {
    int64_t job = 0;                   // the array's id, when accepted
    std::optional<Rejection> rejected; // the job as asked cannot run on this cluster
};
// Submits the array. A cluster that cannot be reached is an infra Error; a job it refuses
// (no such partition, ...) is a Submitted with `rejected`, for the caller to name its key.
Expected<Submitted> submit(const ArrayRequest& request);

// Every task of the jobs named `name` that slurmctld still knows, ended ones included
// (for MinJobAge after they end). Pending tasks of an array are listed one by one.
Expected<std::vector<TaskStatus>> tasks(const std::string& name);
std::vector<TaskStatus> parse_squeue(std::string_view text);

// scancel for every job named `name`, queued or running.
Expected<void> cancel(const std::string& name);
// scancel for one task of an array.
Expected<void> cancel_task(int64_t array_job, int index);

// What the batch coordinator asks of a cluster: the seam where unit tests put a fake one.
class Cluster {
public:
    virtual ~Cluster() = default;
    virtual Expected<Submitted> submit(const ArrayRequest& request) = 0;
    virtual Expected<std::vector<TaskStatus>> tasks(const std::string& name) = 0;
    virtual Expected<void> cancel(const std::string& name) = 0;
    virtual Expected<void> cancel_task(int64_t array_job, int index) = 0;
};

// Slurm through its commands: submit, tasks, cancel and cancel_task above.
Cluster& slurm_cluster();

// `sinfo`'s partitions and node states in one line, or why Slurm does not answer.
Expected<std::string> cluster_summary();

// A credential made by munge and read back by unmunge, through the socket slurm.conf's
// AuthInfo names (the default one otherwise): what every Slurm RPC depends on.
Expected<std::string> munge_round_trip(const std::filesystem::path& scratch_dir);

} // namespace rig::sched
