// SPDX-License-Identifier: MIT
// Tests of sched/slurm without a cluster: state names, what a state means for a sample,
// squeue's output, sbatch's argument vector and its refusals.
#include "sched/slurm.hpp"

#include <gtest/gtest.h>

using namespace rig::sched;

TEST(sched, state_names_parse_in_one_place) {
    EXPECT_EQ(parse_job_state("PENDING"), JobState::pending);
    EXPECT_EQ(parse_job_state("NODE_FAIL"), JobState::node_fail);
    EXPECT_EQ(parse_job_state("OUT_OF_MEMORY"), JobState::out_of_memory);
    // squeue adds who cancelled.
    EXPECT_EQ(parse_job_state("CANCELLED by 0"), JobState::cancelled);
    EXPECT_EQ(parse_job_state("pending"), std::nullopt);
    EXPECT_EQ(parse_job_state("SOMETHING_NEW"), std::nullopt);
    EXPECT_EQ(to_string(JobState::timeout), "TIMEOUT");
    EXPECT_EQ(to_string(JobState::unknown), "UNKNOWN");
}

TEST(sched, only_a_program_that_ended_by_itself_gives_a_result) {
    EXPECT_EQ(task_end(JobState::completed), TaskEnd::by_program);
    EXPECT_EQ(task_end(JobState::failed), TaskEnd::by_program);
    for (JobState state : {JobState::cancelled, JobState::node_fail, JobState::preempted,
                           JobState::boot_fail, JobState::deadline})
        EXPECT_EQ(task_end(state), TaskEnd::by_scheduler) << to_string(state);
    // Ended for what the task used: another attempt would use as much.
    EXPECT_EQ(task_end(JobState::timeout), TaskEnd::time_limit);
    EXPECT_EQ(task_end(JobState::out_of_memory), TaskEnd::out_of_memory);
    for (JobState state : {JobState::pending, JobState::running, JobState::completing,
                           JobState::requeued, JobState::suspended, JobState::unknown})
        EXPECT_EQ(task_end(state), TaskEnd::not_yet) << to_string(state);
    EXPECT_TRUE(is_queued(JobState::pending));
    EXPECT_FALSE(is_queued(JobState::running));
}

TEST(sched, squeue_lines_become_tasks) {
    auto tasks = parse_squeue("12|0|COMPLETED|None\n"
                              "12|3|PENDING|Resources\n"
                              "13|N/A|RUNNING|None\n"
                              "garbage\n"
                              "14|1|CANCELLED by 0|None\n");
    ASSERT_EQ(tasks.size(), 3u);
    EXPECT_EQ(tasks[0].array_job, 12);
    EXPECT_EQ(tasks[0].index, 0);
    EXPECT_EQ(tasks[0].state, JobState::completed);
    EXPECT_EQ(tasks[1].index, 3);
    EXPECT_EQ(tasks[1].reason, "Resources");
    EXPECT_EQ(tasks[2].state, JobState::cancelled);
}

TEST(sched, array_lists_are_ranges) {
    EXPECT_EQ(array_list({0, 1, 2, 3}), "0-3");
    EXPECT_EQ(array_list({7, 0, 2, 1, 9, 9}), "0-2,7,9");
    EXPECT_EQ(array_list({5}), "5");
}

TEST(sched, sbatch_gets_an_argument_vector_with_rigs_options_last) {
    ArrayRequest request;
    request.name = "rig-0123abcd-run4";
    request.indices = {0, 1, 3};
    request.program = "/opt/rig/bin/rig";
    request.jobs_dir = "/shared/runs/4/jobs";
    request.script = "/shared/runs/4/jobs/rig-sample.sh";
    request.output = "/shared/runs/4/jobs/slurm-%A_%a.out";
    request.cwd = "/shared";
    request.options.partition = "rig";
    request.options.constraint = "kvm&fast";
    request.options.time_limit = std::chrono::minutes(30);
    request.options.cpus_per_task = 2;
    request.options.extra = {"--qos=high", "--job-name=theirs"};
    std::vector<std::string> expected{"sbatch",
                                      "--qos=high",
                                      "--job-name=theirs",
                                      "--partition=rig",
                                      "--constraint=kvm&fast",
                                      "--time=30",
                                      "--exclusive",
                                      "--no-requeue",
                                      "--cpus-per-task=2",
                                      "--parsable",
                                      "--job-name=rig-0123abcd-run4",
                                      "--array=0-1,3",
                                      "--output=/shared/runs/4/jobs/slurm-%A_%a.out",
                                      "--chdir=/shared",
                                      "/shared/runs/4/jobs/rig-sample.sh",
                                      "/opt/rig/bin/rig",
                                      "/shared/runs/4/jobs"};
    EXPECT_EQ(sbatch_argv(request), expected);
    request.options.exclusive = false;
    auto argv = sbatch_argv(request);
    EXPECT_EQ(std::find(argv.begin(), argv.end(), "--exclusive"), argv.end());
}

TEST(sched, refusals_name_the_option_and_an_unreachable_cluster_is_none) {
    auto partition = rejection("sbatch: error: invalid partition specified: nope\n"
                               "sbatch: error: Batch job submission failed: Invalid partition "
                               "name specified\n");
    ASSERT_TRUE(partition);
    EXPECT_EQ(partition->option, RejectedOption::partition);
    EXPECT_EQ(partition->message, "sbatch: error: invalid partition specified: nope; sbatch: "
                                  "error: Batch job submission failed: Invalid partition name "
                                  "specified");
    EXPECT_EQ(rejection("sbatch: error: Batch job submission failed: Invalid account or "
                        "account/partition combination specified")
                  ->option,
              RejectedOption::account);
    EXPECT_EQ(rejection("sbatch: error: Batch job submission failed: Invalid feature "
                        "specification")
                  ->option,
              RejectedOption::constraint);
    EXPECT_EQ(rejection("sbatch: error: Batch job submission failed: Requested time limit is "
                        "invalid (missing or exceeds some limit)")
                  ->option,
              RejectedOption::time_limit);
    EXPECT_EQ(rejection("sbatch: unrecognized option '--bogus'")->option, RejectedOption::other);
    EXPECT_EQ(rejection("sbatch: error: Batch job submission failed: Unable to contact slurm "
                        "controller (connect failure)"),
              std::nullopt);
}
