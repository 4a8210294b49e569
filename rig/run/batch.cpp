// SPDX-License-Identifier: MIT
// The batch coordinator: job files, submissions, polling, ingestion and retries.
#include "run/batch.hpp"

#include "core/diagnostic.hpp"
#include "run/cells.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

#include <map>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

// A task squeue stops listing (purged after MinJobAge, or a controller that lost its
// state) is given up after this many polls.
constexpr int k_missing_polls = 5;
// After scancel, how long to wait for the tasks to end: Slurm's KillWait plus a margin.
constexpr auto k_cancel_wait = std::chrono::seconds(90);

struct Tracked {
    BatchSample sample;
    int attempt = 0;
    int64_t array_job = 0; // 0: waiting to be submitted
    sched::JobState state = sched::JobState::pending;
    int missing = 0; // polls in a row that did not list the task
    bool done = false;
};

fs::path job_file(const BatchSettings& settings, int index) {
    return settings.jobs_dir / (std::to_string(index) + ".json");
}

// One record per attempt, beside the job file and outside the sample's folder (which the
// next attempt empties): a late write of an attempt given up on cannot pass for another's.
fs::path record_file(const BatchSettings& settings, int index, int attempt) {
    return settings.jobs_dir /
           (std::to_string(index) + "." + std::to_string(attempt) + ".record.json");
}

fs::path output_file(const BatchSettings& settings, int64_t array_job, int index) {
    return settings.jobs_dir /
           ("slurm-" + std::to_string(array_job) + "_" + std::to_string(index) + ".out");
}

std::string tail(const std::string& text, size_t bytes) {
    return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

std::string first_line(const std::string& text) {
    return std::string(util::trim(text.substr(0, text.find('\n'))));
}

// The scenario key whose value sbatch refused; the `slurm` key (or `backend`) otherwise.
tl::unexpected<Error> rejection_error(const core::Scenario& scenario,
                                      const sched::Rejection& rejection) {
    const core::Slurm& slurm = scenario.slurm;
    const std::optional<core::Located>* key = nullptr;
    switch (rejection.option) {
    case sched::RejectedOption::partition:
        key = &slurm.partition;
        break;
    case sched::RejectedOption::account:
        key = &slurm.account;
        break;
    case sched::RejectedOption::constraint:
        key = &slurm.constraint;
        break;
    case sched::RejectedOption::time_limit:
        key = &slurm.time;
        break;
    case sched::RejectedOption::other:
        break;
    }
    std::string message = "sbatch refused the job: " + rejection.message;
    if (key && *key)
        return core::config_error(scenario.file, (*key)->loc, (*key)->path,
                                  message + " ('" + (*key)->value + "')");
    if (!slurm.sbatch.empty() && rejection.option == sched::RejectedOption::other)
        return core::config_error(scenario.file, slurm.sbatch.front().loc, "slurm.sbatch", message);
    return core::config_error(scenario.file, slurm.loc, "slurm", message);
}

class Coordinator {
public:
    Coordinator(const core::Scenario& scenario, const BatchSettings& settings,
                const std::atomic<bool>& interrupted, const BatchEvents& events)
        : m_scenario(scenario), m_settings(settings), m_interrupted(interrupted), m_events(events) {
    }

    Expected<void> run(std::vector<BatchSample> samples) {
        std::error_code ec;
        fs::create_directories(m_settings.jobs_dir, ec);
        if (ec)
            return fail(ErrorKind::infra,
                        "cannot create " + m_settings.jobs_dir.string() + ": " + ec.message());
        m_script = m_settings.jobs_dir / "rig-sample.sh";
        RIG_TRY(sched::write_batch_script(m_script));
        for (BatchSample& sample : samples)
            m_tracked.push_back({std::move(sample)});
        RIG_TRY(adopt());
        while (!all_done()) {
            if (m_interrupted)
                return stop();
            RIG_TRY(submit_waiting());
            show_counts();
            wait_a_poll();
            if (m_interrupted)
                return stop();
            RIG_TRY(poll());
        }
        show_counts();
        return {};
    }

private:
    bool all_done() const {
        for (const Tracked& task : m_tracked)
            if (!task.done)
                return false;
        return true;
    }

    sched::Cluster& cluster() const {
        return m_settings.cluster ? *m_settings.cluster : sched::slurm_cluster();
    }

    void wait_a_poll() const {
        const auto step = std::min(m_settings.poll, std::chrono::milliseconds(100));
        for (auto waited = std::chrono::milliseconds(0); waited < m_settings.poll && !m_interrupted;
             waited += step)
            m_settings.clock->sleep_for(step);
    }

    void show_counts() const {
        size_t queued = 0, running = 0, done = 0;
        for (const Tracked& task : m_tracked) {
            if (task.done)
                ++done;
            else if (task.array_job == 0 || sched::is_queued(task.state))
                ++queued;
            else
                ++running;
        }
        if (m_events.counts)
            m_events.counts(queued, running, done);
    }

    void note(const Tracked& task, const std::string& text) const {
        if (m_events.note)
            m_events.note(task.sample.label + ": " + text);
    }

    // What an earlier coordinator of this job name left: its newest task per sample is
    // followed as if submitted here; any other task still queued or running is cancelled,
    // so that no sample runs twice. A sample whose task is gone has its record looked for.
    Expected<void> adopt() {
        std::map<int, sched::TaskStatus> newest;
        std::vector<sched::TaskStatus> found = RIG_TRY(cluster().tasks(m_settings.job_name));
        for (const sched::TaskStatus& task : found)
            if (!newest.count(task.index) || newest[task.index].array_job < task.array_job)
                newest[task.index] = task;
        std::map<int, Tracked*> by_index;
        for (Tracked& task : m_tracked)
            by_index[task.sample.index] = &task;
        for (const sched::TaskStatus& task : found) {
            bool followed =
                by_index.count(task.index) && newest[task.index].array_job == task.array_job;
            if (!followed && sched::task_end(task.state) == sched::TaskEnd::not_yet)
                RIG_TRY(cluster().cancel_task(task.array_job, task.index));
        }
        for (Tracked& task : m_tracked) {
            fs::path file = job_file(m_settings, task.sample.index);
            std::error_code ec;
            if (fs::exists(file, ec))
                if (auto earlier = read_job(file))
                    task.attempt = earlier->attempt;
            auto it = newest.find(task.sample.index);
            if (it != newest.end()) {
                task.array_job = it->second.array_job;
                task.state = it->second.state;
                note(task, "adopted Slurm task " + std::to_string(task.array_job) + "_" +
                               std::to_string(task.sample.index) + " (" +
                               std::string(sched::to_string(task.state)) + ")");
            } else if (fs::exists(record_file(m_settings, task.sample.index, task.attempt), ec)) {
                RIG_TRY(conclude(task, sched::TaskEnd::by_program, "ended before the resume"));
            }
        }
        return {};
    }

    // Job files first, then one array for every sample waiting.
    Expected<void> submit_waiting() {
        std::vector<int> indices;
        for (Tracked& task : m_tracked) {
            if (task.done || task.array_job != 0)
                continue;
            SampleJob& job = task.sample.job;
            job.attempt = task.attempt;
            job.record = record_file(m_settings, task.sample.index, task.attempt);
            std::error_code ec;
            fs::remove(job.record, ec);
            RIG_TRY(write_job(job_file(m_settings, task.sample.index), job));
            indices.push_back(task.sample.index);
        }
        if (indices.empty())
            return {};
        sched::ArrayRequest request;
        request.name = m_settings.job_name;
        request.indices = indices;
        request.program = m_settings.program;
        request.jobs_dir = m_settings.jobs_dir;
        request.script = m_script;
        request.output = m_settings.jobs_dir / "slurm-%A_%a.out";
        request.cwd = m_settings.cwd;
        request.options = m_settings.options;
        sched::Submitted submitted = RIG_TRY(cluster().submit(request));
        if (submitted.rejected)
            return rejection_error(m_scenario, *submitted.rejected);
        for (Tracked& task : m_tracked)
            if (!task.done && task.array_job == 0) {
                task.array_job = submitted.job;
                task.state = sched::JobState::pending;
                task.missing = 0;
            }
        if (m_events.note)
            m_events.note("slurm: submitted job " + std::to_string(submitted.job) + ", tasks " +
                          sched::array_list(indices));
        return {};
    }

    Expected<void> poll() {
        std::map<std::pair<int64_t, int>, sched::TaskStatus> listed;
        for (const sched::TaskStatus& task : RIG_TRY(cluster().tasks(m_settings.job_name)))
            listed[{task.array_job, task.index}] = task;
        for (Tracked& task : m_tracked) {
            if (task.done || task.array_job == 0)
                continue;
            auto it = listed.find({task.array_job, task.sample.index});
            if (it == listed.end()) {
                if (++task.missing < k_missing_polls)
                    continue;
                std::error_code ec;
                bool recorded =
                    fs::exists(record_file(m_settings, task.sample.index, task.attempt), ec);
                // Should it only be hidden from squeue, it must not run beside its retry.
                if (!recorded)
                    RIG_TRY(cluster().cancel_task(task.array_job, task.sample.index));
                RIG_TRY(conclude(
                    task, recorded ? sched::TaskEnd::by_program : sched::TaskEnd::by_scheduler,
                    "Slurm no longer lists task " + std::to_string(task.array_job) + "_" +
                        std::to_string(task.sample.index)));
                continue;
            }
            task.missing = 0;
            task.state = it->second.state;
            sched::TaskEnd end = sched::task_end(task.state);
            if (end != sched::TaskEnd::not_yet)
                RIG_TRY(conclude(task, end,
                                 "Slurm task " + std::to_string(task.array_job) + "_" +
                                     std::to_string(task.sample.index) + " ended " +
                                     std::string(sched::to_string(task.state)) +
                                     (it->second.reason.empty() || it->second.reason == "None"
                                          ? std::string()
                                          : " (" + it->second.reason + ")")));
        }
        return {};
    }

    // A task has ended: its record is the sample's result when its program ended by itself
    // with one; anything else is infra, retried until the bound and then stored as an
    // infra error with what is known.
    Expected<void> conclude(Tracked& task, sched::TaskEnd end, const std::string& how) {
        auto record = read_record(record_file(m_settings, task.sample.index, task.attempt));
        if (end == sched::TaskEnd::time_limit || end == sched::TaskEnd::out_of_memory)
            return conclude_over_limit(task, end, how, record);
        bool result = end == sched::TaskEnd::by_program && record &&
                      record->outcome != core::Outcome::infra_error &&
                      record->outcome != core::Outcome::aborted;
        if (result) {
            RIG_TRY(m_events.finished(*record));
            task.done = true;
            note(task, core::outcome_text(*record) + " in " +
                           std::to_string(static_cast<int>(record->total_seconds)) + " s" +
                           (task.attempt > 0 ? " (attempt " + std::to_string(task.attempt + 1) + ")"
                                             : std::string()));
            return {};
        }
        std::string why = how;
        if (end == sched::TaskEnd::by_program)
            why += record
                       ? ": the sample was " + std::string(core::to_string(record->outcome)) +
                             (record->evidence.empty() ? std::string()
                                                       : " (" + first_line(record->evidence) + ")")
                       : ": " + record.error().message;
        if (task.attempt < m_settings.infra_retries) {
            note(task, "infra, retried: " + why);
            ++task.attempt;
            task.array_job = 0;
            return {};
        }
        core::Sample sample = record && record->outcome == core::Outcome::infra_error
                                  ? *record
                                  : blank_sample(task, core::Outcome::infra_error);
        sample.evidence = why + " after " + std::to_string(task.attempt + 1) + " attempts\n" +
                          slurm_output(task) + sample.evidence;
        RIG_TRY(m_events.finished(sample));
        task.done = true;
        note(task, "infra-error after " + std::to_string(task.attempt + 1) + " attempts: " + why);
        return {};
    }

    // The scheduler ended the task for what it used, and another attempt would use as much
    // again: no retry. Past its time limit the sample is a result, time-limit (it ran longer
    // than the job may, though its own timeouts had not ended it: a hang as far as the job
    // can tell); killed by the node's OOM killer it is an infra error (QEMU and rig needed
    // more memory than the job was given, which says nothing about the kernel). The record
    // the worker wrote on the SIGTERM before the kill, if any, keeps its lines and console.
    Expected<void> conclude_over_limit(Tracked& task, sched::TaskEnd end, const std::string& how,
                                       const Expected<core::Sample>& record) {
        bool timed_out = end == sched::TaskEnd::time_limit;
        core::Outcome outcome = timed_out ? core::Outcome::time_limit : core::Outcome::infra_error;
        core::Sample sample = record ? *record : blank_sample(task, outcome);
        sample.outcome = outcome;
        const auto& limit = m_settings.options.time_limit;
        std::string why =
            timed_out ? how + ": the sample ran past the job's time limit (slurm.time" +
                            (limit ? " " + std::to_string(limit->count()) + " min" : "") +
                            ") before its own timeouts ended it"
                      : how + ": the node's OOM killer ended it; QEMU and rig need more memory "
                              "than the job was given (slurm.sbatch: --mem=...), not retried";
        std::string console = tail(util::read_file(task.sample.job.dir / "console.log"), 2048);
        sample.evidence =
            why + "\n" + slurm_output(task) +
            (record || console.empty() ? std::string() : "console (tail):\n" + console + "\n") +
            sample.evidence;
        RIG_TRY(m_events.finished(sample));
        task.done = true;
        note(task, std::string(core::to_string(outcome)) + ": " + why);
        return {};
    }

    // A sample of the task that no record describes.
    core::Sample blank_sample(const Tracked& task, core::Outcome outcome) const {
        core::Sample sample;
        sample.cell_id = task.sample.job.cell.cell.id;
        sample.repetition = task.sample.job.repetition;
        sample.kernel_artifact = task.sample.job.kernel_id;
        sample.outcome = outcome;
        return sample;
    }

    // The tail of what Slurm captured of the task's output, headed, or "".
    std::string slurm_output(const Tracked& task) const {
        std::string output =
            tail(util::read_file(output_file(m_settings, task.array_job, task.sample.index)), 2048);
        return output.empty() ? std::string() : "Slurm output (tail):\n" + output;
    }

    // Ctrl-C: cancel the run's tasks, wait for them to end, and store the samples that
    // finished meanwhile; the rest stays missing for --resume.
    Expected<void> stop() {
        if (m_events.note)
            m_events.note("slurm: interrupted, cancelling the run's jobs");
        RIG_TRY(cluster().cancel(m_settings.job_name));
        util::Clock& clock = *m_settings.clock;
        auto deadline = clock.now() + k_cancel_wait;
        while (clock.now() < deadline) {
            bool live = false;
            std::map<std::pair<int64_t, int>, sched::TaskStatus> listed;
            for (const sched::TaskStatus& task : RIG_TRY(cluster().tasks(m_settings.job_name))) {
                listed[{task.array_job, task.index}] = task;
                live |= sched::task_end(task.state) == sched::TaskEnd::not_yet;
            }
            if (!live) {
                for (Tracked& task : m_tracked) {
                    auto it = listed.find({task.array_job, task.sample.index});
                    if (task.done || it == listed.end() ||
                        sched::task_end(it->second.state) != sched::TaskEnd::by_program)
                        continue;
                    auto record =
                        read_record(record_file(m_settings, task.sample.index, task.attempt));
                    if (record && record->outcome != core::Outcome::infra_error &&
                        record->outcome != core::Outcome::aborted) {
                        RIG_TRY(m_events.finished(*record));
                        task.done = true;
                    }
                }
                return {};
            }
            clock.sleep_for(std::min(m_settings.poll, std::chrono::milliseconds(500)));
        }
        return fail(ErrorKind::infra, "Slurm jobs named " + m_settings.job_name +
                                          " did not end within " +
                                          std::to_string(k_cancel_wait.count()) + " s of scancel");
    }

    const core::Scenario& m_scenario;
    const BatchSettings& m_settings;
    const std::atomic<bool>& m_interrupted;
    const BatchEvents& m_events;
    fs::path m_script;
    std::vector<Tracked> m_tracked;
};

} // namespace

Expected<void> run_batch(const core::Scenario& scenario, std::vector<BatchSample> samples,
                         const BatchSettings& settings, const std::atomic<bool>& interrupted,
                         const BatchEvents& events) {
    Coordinator coordinator(scenario, settings, interrupted, events);
    return coordinator.run(std::move(samples));
}

Expected<std::pair<fs::path, fs::path>> share_kernel(const std::string& id,
                                                     const fs::path& boot_image,
                                                     const fs::path& base_initrd,
                                                     const fs::path& shared) {
    fs::path dir = shared / "kernels" / id;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + dir.string() + ": " + ec.message());
    auto place = [&](const fs::path& from) -> Expected<fs::path> {
        fs::path to = dir / from.filename();
        if (fs::exists(to, ec))
            return to;
        fs::path temporary = to.string() + ".tmp";
        fs::remove(temporary, ec);
        fs::create_hard_link(from, temporary, ec);
        if (ec)
            fs::copy_file(from, temporary, ec);
        if (!ec)
            fs::rename(temporary, to, ec);
        if (ec)
            return fail(ErrorKind::infra, "cannot place " + from.string() + " in " + dir.string() +
                                              ": " + ec.message());
        return to;
    };
    fs::path boot = RIG_TRY(place(boot_image));
    return std::pair{boot, RIG_TRY(place(base_initrd))};
}

namespace {

// The index of the job file for this cell and repetition, or the next unused one.
int stable_index(const fs::path& jobs_dir, const std::string& cell_id, int repetition) {
    int next = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(jobs_dir, ec)) {
        std::string name = entry.path().filename().string();
        if (entry.path().extension() != ".json" ||
            name.find_first_not_of("0123456789") != name.size() - 5)
            continue;
        int index = std::stoi(name);
        next = std::max(next, index + 1);
        if (auto job = read_job(entry.path());
            job && job->cell.cell.id == cell_id && job->repetition == repetition)
            return index;
    }
    return next;
}

} // namespace

Expected<core::Sample> run_batch_one(const SampleContext& context, const BatchSettings& settings,
                                     const fs::path& shared, const std::atomic<bool>& interrupted,
                                     const std::function<void(const std::string&)>& note) {
    auto [boot, initrd] = RIG_TRY(
        share_kernel(context.kernel.id, context.kernel.boot_image, context.base_initrd, shared));
    std::error_code ec;
    fs::create_directories(settings.jobs_dir, ec);
    BatchSample sample;
    sample.index = stable_index(settings.jobs_dir, context.cell.id, context.repetition);
    sample.label = context.cell.kernel_name + " rep " + std::to_string(context.repetition + 1);
    SampleJob& job = sample.job;
    job.cell = sample_record(context.scenario, context.cell);
    job.repetition = context.repetition;
    job.kernel_id = context.kernel.id;
    job.boot_image = boot;
    job.base_initrd = initrd;
    job.dir = context.dir;
    std::optional<core::Sample> result;
    BatchEvents events;
    events.finished = [&](const core::Sample& finished) -> Expected<void> {
        result = finished;
        return {};
    };
    events.note = note;
    RIG_TRY(run_batch(context.scenario, {sample}, settings, interrupted, events));
    if (result)
        return *result;
    core::Sample aborted;
    aborted.cell_id = context.cell.id;
    aborted.repetition = context.repetition;
    aborted.kernel_artifact = context.kernel.id;
    aborted.outcome = core::Outcome::aborted;
    aborted.evidence = "rig was interrupted while the sample's Slurm job ran\n";
    return aborted;
}

sched::JobOptions job_options(const core::Scenario& scenario) {
    const core::Slurm& slurm = scenario.slurm;
    sched::JobOptions options;
    auto value = [](const std::optional<core::Located>& key) { return key ? key->value : ""; };
    options.partition = value(slurm.partition);
    options.account = value(slurm.account);
    options.constraint = value(slurm.constraint);
    options.time_limit = slurm.time_limit;
    options.exclusive = slurm.exclusive;
    options.cpus_per_task = scenario.guest.cpus;
    for (const core::Located& argument : slurm.sbatch)
        options.extra.push_back(argument.value);
    return options;
}

std::string batch_job_name(const fs::path& db, const std::string& started_at,
                           const std::string& tag) {
    std::string identity = fs::absolute(db).lexically_normal().string() + "\n" + started_at;
    return "rig-" + util::sha256_hex(identity).substr(0, 8) + "-" + tag;
}

} // namespace rig::run
