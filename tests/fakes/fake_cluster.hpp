// SPDX-License-Identifier: MIT
// A Slurm cluster for unit tests of the batch coordinator: a submitted task is pending at
// the next poll, running at the one after, and then (one task per poll) ends as the test's
// script says, its
// "program" writing the sample's record the way `rig sample` does (or writing none, when
// the scheduler ended it).
#pragma once

#include "core/sample.hpp"
#include "run/worker.hpp"
#include "sched/slurm.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rig::test {

class FakeCluster final : public sched::Cluster {
public:
    // How one attempt of a sample ends: the task's state, and the outcome its record holds
    // (none: the program never wrote one).
    struct Ending {
        sched::JobState state = sched::JobState::completed;
        std::optional<core::Outcome> outcome = core::Outcome::ok;
    };
    using Script = std::function<Ending(const run::SampleJob& job)>;

    explicit FakeCluster(Script script) : m_script(std::move(script)) {}

    Expected<sched::Submitted> submit(const sched::ArrayRequest& request) override;
    Expected<std::vector<sched::TaskStatus>> tasks(const std::string& name) override;
    Expected<void> cancel(const std::string& name) override;
    Expected<void> cancel_task(int64_t array_job, int index) override;

    int submitted = 0; // arrays
    int cancels = 0;   // cancel and cancel_task calls
    int polls = 0;     // tasks calls
    // A cluster whose tasks outlive scancel: once cancelled, no task changes state again.
    bool ignores_cancel = false;
    // Each task run, as "index.attempt" from its job file.
    std::vector<std::string> ran;

private:
    struct Task {
        std::string name;
        std::filesystem::path job_file;
        int polls = 0;
        sched::JobState state = sched::JobState::pending;
    };
    // One poll of the task; true when it ended now.
    bool advance(Task& task, bool may_end);

    Script m_script;
    int64_t m_next_job = 100;
    bool m_stuck = false; // cancelled, with ignores_cancel
    std::map<std::pair<int64_t, int>, Task> m_tasks;
};

} // namespace rig::test
