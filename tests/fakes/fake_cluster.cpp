// SPDX-License-Identifier: MIT
// The fake cluster.
#include "fake_cluster.hpp"

namespace rig::test {

Expected<sched::Submitted> FakeCluster::submit(const sched::ArrayRequest& request) {
    ++submitted;
    int64_t job = m_next_job++;
    for (int index : request.indices)
        m_tasks[{job, index}] = {request.name,
                                 request.jobs_dir / (std::to_string(index) + ".json")};
    return sched::Submitted{job, std::nullopt};
}

bool FakeCluster::advance(Task& task, bool may_end) {
    if (m_stuck || sched::task_end(task.state) != sched::TaskEnd::not_yet)
        return false;
    ++task.polls;
    if (task.polls == 1)
        return false; // still pending
    if (task.polls == 2 || !may_end) {
        task.state = sched::JobState::running;
        return false;
    }
    auto job = run::read_job(task.job_file);
    if (!job) {
        task.state = sched::JobState::failed;
        return true;
    }
    ran.push_back(task.job_file.stem().string() + "." + std::to_string(job->attempt));
    Ending ending = m_script(*job);
    task.state = ending.state;
    if (ending.outcome) {
        core::Sample sample;
        sample.cell_id = job->cell.cell.id;
        sample.repetition = job->repetition;
        sample.kernel_artifact = job->kernel_id;
        sample.outcome = *ending.outcome;
        sample.total_seconds = 1;
        sample.accel = "tcg";
        (void)run::write_record(job->record, sample, "fake-node");
    }
    return true;
}

Expected<std::vector<sched::TaskStatus>> FakeCluster::tasks(const std::string& name) {
    ++polls;
    std::vector<sched::TaskStatus> out;
    bool ended = false; // one task ends per poll, as samples of a busy cluster do
    for (auto& [key, task] : m_tasks) {
        if (task.name != name)
            continue;
        ended |= advance(task, !ended);
        out.push_back({key.first, key.second, task.state, ""});
    }
    return out;
}

Expected<void> FakeCluster::cancel(const std::string& name) {
    ++cancels;
    m_stuck = ignores_cancel;
    if (ignores_cancel)
        return {};
    for (auto& [key, task] : m_tasks)
        if (task.name == name && sched::task_end(task.state) == sched::TaskEnd::not_yet)
            task.state = sched::JobState::cancelled;
    return {};
}

Expected<void> FakeCluster::cancel_task(int64_t array_job, int index) {
    ++cancels;
    m_stuck = ignores_cancel;
    if (ignores_cancel)
        return {};
    if (auto it = m_tasks.find({array_job, index});
        it != m_tasks.end() && sched::task_end(it->second.state) == sched::TaskEnd::not_yet)
        it->second.state = sched::JobState::cancelled;
    return {};
}

} // namespace rig::test
