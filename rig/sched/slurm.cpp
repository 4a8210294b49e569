// SPDX-License-Identifier: MIT
// The Slurm client through its commands. sbatch rather than slurmrestd: the commands come
// with every Slurm node and login host and need only munge, while slurmrestd is one more
// daemon with its own tokens and versioned schema that sites often do not run.
// squeue rather than sacct: sacct needs slurmdbd, which many small clusters (and the
// one-node cluster of scripts/start-slurm) lack, while slurmctld keeps ended jobs for
// MinJobAge, long enough for a coordinator that polls every few seconds.
#include "sched/slurm.hpp"

#include "proc/process.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <unistd.h>

namespace rig::sched {

namespace fs = std::filesystem;

namespace {

struct StateName {
    JobState state;
    std::string_view name;
};

constexpr std::array k_state_names{
    StateName{JobState::pending, "PENDING"},
    StateName{JobState::running, "RUNNING"},
    StateName{JobState::completing, "COMPLETING"},
    StateName{JobState::suspended, "SUSPENDED"},
    StateName{JobState::requeued, "REQUEUED"},
    StateName{JobState::resizing, "RESIZING"},
    StateName{JobState::completed, "COMPLETED"},
    StateName{JobState::failed, "FAILED"},
    StateName{JobState::cancelled, "CANCELLED"},
    StateName{JobState::timeout, "TIMEOUT"},
    StateName{JobState::node_fail, "NODE_FAIL"},
    StateName{JobState::preempted, "PREEMPTED"},
    StateName{JobState::boot_fail, "BOOT_FAIL"},
    StateName{JobState::deadline, "DEADLINE"},
    StateName{JobState::out_of_memory, "OUT_OF_MEMORY"},
    // Held for requeue: still the scheduler's.
    StateName{JobState::requeued, "REQUEUE_HOLD"},
    StateName{JobState::requeued, "REQUEUE_FED"},
    StateName{JobState::pending, "CONFIGURING"},
    StateName{JobState::running, "STAGE_OUT"},
    StateName{JobState::running, "SIGNALING"},
    StateName{JobState::pending, "RESV_DEL_HOLD"},
    StateName{JobState::pending, "STOPPED"},
    StateName{JobState::failed, "SPECIAL_EXIT"},
    StateName{JobState::cancelled, "REVOKED"},
};

const auto k_command_timeout = std::chrono::seconds(60);

Expected<proc::RunResult> slurm_command(const std::vector<std::string>& argv) {
    proc::RunOptions options;
    options.timeout = k_command_timeout;
    auto result = RIG_TRY(proc::run(argv, options));
    if (result.timed_out)
        return fail(ErrorKind::infra, argv[0] + " did not answer within " +
                                          std::to_string(k_command_timeout.count()) + " s");
    return result;
}

std::string first_line(std::string_view text) {
    text = util::trim(text);
    return std::string(text.substr(0, text.find('\n')));
}

bool contains_nocase(std::string_view text, std::string_view word) {
    auto it = std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) ==
               std::tolower(static_cast<unsigned char>(b));
    });
    return it != text.end();
}

} // namespace

std::optional<JobState> parse_job_state(std::string_view text) {
    // squeue prints "CANCELLED by 0" for scancel by uid 0.
    text = text.substr(0, text.find(' '));
    for (const StateName& entry : k_state_names)
        if (entry.name == text)
            return entry.state;
    return std::nullopt;
}

std::string_view to_string(JobState state) {
    if (state == JobState::unknown)
        return "UNKNOWN";
    for (const StateName& entry : k_state_names)
        if (entry.state == state)
            return entry.name;
    return "UNKNOWN";
}

TaskEnd task_end(JobState state) {
    switch (state) {
    case JobState::completed:
    case JobState::failed:
        return TaskEnd::by_program;
    case JobState::cancelled:
    case JobState::node_fail:
    case JobState::preempted:
    case JobState::boot_fail:
    case JobState::deadline:
        return TaskEnd::by_scheduler;
    case JobState::timeout:
        return TaskEnd::time_limit;
    case JobState::out_of_memory:
        return TaskEnd::out_of_memory;
    default:
        return TaskEnd::not_yet;
    }
}

bool is_queued(JobState state) {
    return state == JobState::pending || state == JobState::requeued ||
           state == JobState::suspended || state == JobState::unknown;
}

Expected<void> write_batch_script(const fs::path& path) {
    // Arguments: rig's binary and the jobs folder. No data is ever written into this text.
    static const char* const k_script = "#!/bin/sh\n"
                                        "# rig's batch script: task N of an array runs one "
                                        "sample, described by N.json.\n"
                                        "exec \"$1\" sample \"$2/$SLURM_ARRAY_TASK_ID.json\"\n";
    fs::path temporary = path.string() + ".tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << k_script;
        if (!out.flush())
            return fail(ErrorKind::infra, "cannot write " + temporary.string());
    }
    std::error_code ec;
    fs::permissions(temporary,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec,
                    ec);
    fs::rename(temporary, path, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot write " + path.string() + ": " + ec.message());
    return {};
}

std::string array_list(std::vector<int> indices) {
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
    std::vector<std::string> ranges;
    for (size_t i = 0; i < indices.size();) {
        size_t j = i;
        while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1)
            ++j;
        ranges.push_back(std::to_string(indices[i]) +
                         (j > i ? "-" + std::to_string(indices[j]) : std::string()));
        i = j + 1;
    }
    return util::join(ranges, ",");
}

std::vector<std::string> sbatch_argv(const ArrayRequest& request) {
    const JobOptions& options = request.options;
    std::vector<std::string> argv{"sbatch"};
    argv.insert(argv.end(), options.extra.begin(), options.extra.end());
    if (!options.partition.empty())
        argv.push_back("--partition=" + options.partition);
    if (!options.account.empty())
        argv.push_back("--account=" + options.account);
    if (!options.constraint.empty())
        argv.push_back("--constraint=" + options.constraint);
    if (options.time_limit)
        argv.push_back("--time=" + std::to_string(options.time_limit->count()));
    if (options.exclusive)
        argv.push_back("--exclusive");
    // rig retries a task the cluster lost itself, up to its bound, under a new attempt.
    argv.push_back("--no-requeue");
    argv.push_back("--cpus-per-task=" + std::to_string(options.cpus_per_task));
    argv.push_back("--parsable");
    argv.push_back("--job-name=" + request.name);
    argv.push_back("--array=" + array_list(request.indices));
    argv.push_back("--output=" + request.output.string());
    argv.push_back("--chdir=" + request.cwd.string());
    argv.push_back(request.script.string());
    argv.push_back(request.program.string());
    argv.push_back(request.jobs_dir.string());
    return argv;
}

RejectedOption rejected_option(std::string_view error) {
    // "Invalid account or account/partition combination" is about the account.
    if (contains_nocase(error, "account"))
        return RejectedOption::account;
    if (contains_nocase(error, "partition"))
        return RejectedOption::partition;
    if (contains_nocase(error, "feature") || contains_nocase(error, "constraint"))
        return RejectedOption::constraint;
    if (contains_nocase(error, "time limit"))
        return RejectedOption::time_limit;
    return RejectedOption::other;
}

std::optional<Rejection> rejection(std::string_view error) {
    // A controller that cannot be reached says so; anything else sbatch refuses is the job.
    if (contains_nocase(error, "unable to contact") ||
        contains_nocase(error, "connection refused") || contains_nocase(error, "munge") ||
        contains_nocase(error, "socket timed out"))
        return std::nullopt;
    Rejection rejected;
    rejected.option = rejected_option(error);
    std::vector<std::string> lines;
    util::for_each_line(error, [&](std::string_view line) {
        line = util::trim(line);
        if (!line.empty())
            lines.emplace_back(line);
    });
    rejected.message = util::join(lines, "; ");
    return rejected;
}

Expected<Submitted> submit(const ArrayRequest& request) {
    if (!proc::find_program("sbatch"))
        return fail(ErrorKind::infra, "sbatch not found in PATH (package slurm-client)");
    auto result = RIG_TRY(slurm_command(sbatch_argv(request)));
    if (result.exit_code == 0) {
        // --parsable prints "jobid" or "jobid;cluster".
        std::string text = first_line(result.out);
        try {
            return Submitted{std::stoll(text.substr(0, text.find(';'))), std::nullopt};
        } catch (const std::exception&) {
            return fail(ErrorKind::infra, "sbatch printed no job id: " + text);
        }
    }
    if (auto rejected = rejection(result.err))
        return Submitted{0, rejected};
    return fail(ErrorKind::infra, "sbatch failed: " + first_line(result.err));
}

std::vector<TaskStatus> parse_squeue(std::string_view text) {
    std::vector<TaskStatus> out;
    util::for_each_line(text, [&](std::string_view line) {
        std::vector<std::string> fields = util::split(util::trim(line), '|');
        if (fields.size() < 3)
            return;
        TaskStatus task;
        try {
            task.array_job = std::stoll(fields[0]);
            task.index = std::stoi(fields[1]);
        } catch (const std::exception&) {
            return; // not a task of an array (N/A)
        }
        task.state = parse_job_state(fields[2]).value_or(JobState::unknown);
        if (fields.size() > 3)
            task.reason = fields[3];
        out.push_back(task);
    });
    return out;
}

Expected<std::vector<TaskStatus>> tasks(const std::string& name) {
    // %F the array's id, %K the task's index, %T its state, %r why.
    auto result = RIG_TRY(slurm_command({"squeue", "--noheader", "--array", "--states=all",
                                         "--name=" + name, "--format=%F|%K|%T|%r"}));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, "squeue failed: " + first_line(result.err));
    return parse_squeue(result.out);
}

Expected<void> cancel(const std::string& name) {
    auto result = RIG_TRY(slurm_command({"scancel", "--name=" + name}));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, "scancel failed: " + first_line(result.err));
    return {};
}

Expected<void> cancel_task(int64_t array_job, int index) {
    auto result = RIG_TRY(
        slurm_command({"scancel", std::to_string(array_job) + "_" + std::to_string(index)}));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, "scancel failed: " + first_line(result.err));
    return {};
}

Expected<std::string> munge_round_trip(const fs::path& scratch_dir) {
    if (!proc::find_program("munge") || !proc::find_program("unmunge"))
        return fail(ErrorKind::infra, "munge not found in PATH (package munge)");
    std::vector<std::string> socket;
    if (auto config = slurm_command({"scontrol", "show", "config"});
        config && config->exit_code == 0) {
        util::for_each_line(config->out, [&](std::string_view line) {
            // "AuthInfo                = socket=/path/munge.socket"
            if (!util::starts_with(line, "AuthInfo"))
                return;
            size_t at = line.find("socket=");
            if (at != std::string_view::npos)
                socket.push_back("--socket=" + std::string(util::trim(line.substr(
                                                   at + 7, line.find(',', at) - at - 7))));
        });
    }
    fs::path credential = scratch_dir / (".rig-munge-" + std::to_string(::getpid()));
    std::vector<std::string> encode{"munge", "--no-input", "--output=" + credential.string()};
    encode.insert(encode.end(), socket.begin(), socket.end());
    auto made = RIG_TRY(slurm_command(encode));
    std::vector<std::string> decode{"unmunge", "--input=" + credential.string()};
    decode.insert(decode.end(), socket.begin(), socket.end());
    auto read = made.exit_code == 0 ? slurm_command(decode) : Expected<proc::RunResult>(made);
    std::error_code ec;
    fs::remove(credential, ec);
    if (made.exit_code != 0)
        return fail(ErrorKind::infra, "munge failed: " + first_line(made.err));
    if (!read)
        return tl::unexpected(read.error());
    if (read->exit_code != 0)
        return fail(ErrorKind::infra, "unmunge failed: " + first_line(read->err));
    return std::string("a credential made and read back") +
           (socket.empty() ? "" : " (" + socket.front().substr(2) + ")");
}

Expected<std::string> cluster_summary() {
    if (!proc::find_program("sinfo"))
        return fail(ErrorKind::infra, "sinfo not found in PATH (package slurm-client)");
    auto result = RIG_TRY(slurm_command({"sinfo", "--noheader", "--format=%P %a %D %T"}));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, "sinfo failed: " + first_line(result.err));
    std::vector<std::string> lines;
    util::for_each_line(result.out, [&](std::string_view line) {
        if (!util::trim(line).empty())
            lines.emplace_back(util::trim(line));
    });
    if (lines.empty())
        return fail(ErrorKind::infra, "sinfo lists no partition");
    return "partition state nodes: " + util::join(lines, "; ");
}

namespace {

class Slurm final : public Cluster {
public:
    Expected<Submitted> submit(const ArrayRequest& request) override {
        return sched::submit(request);
    }
    Expected<std::vector<TaskStatus>> tasks(const std::string& name) override {
        return sched::tasks(name);
    }
    Expected<void> cancel(const std::string& name) override { return sched::cancel(name); }
    Expected<void> cancel_task(int64_t array_job, int index) override {
        return sched::cancel_task(array_job, index);
    }
};

} // namespace

Cluster& slurm_cluster() {
    static Slurm slurm;
    return slurm;
}

} // namespace rig::sched
