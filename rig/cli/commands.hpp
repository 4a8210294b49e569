// SPDX-License-Identifier: MIT
// The subcommands, each a function from parsed options to an exit code.
#pragma once

#include "core/significance.hpp"
#include "core/status.hpp"
#include "report/plan.hpp"
#include "report/render.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rig::cli {

// Documented in README "Exit codes"; scripts and bisect drivers rely on them.
enum ExitCode : int {
    k_exit_ok = 0,
    k_exit_failed = 1,        // a regression was found or samples failed
    k_exit_usage = 2,         // bad command line, bad scenario
    k_exit_infra = 3,         // QEMU, libvirt, disk, git: the machinery failed
    k_exit_interrupted = 130, // Ctrl-C or SIGTERM: a resume carries on
};

int exit_code_for(const Error& error);
int report_error(const Error& error);

// Makes Ctrl-C, SIGTERM and SIGHUP set the returned flag instead of killing rig: the
// sample in flight ends cleanly and is stored as aborted, so a resume redoes only it.
// Ignores SIGPIPE: a peer that goes away mid-write (a libvirtd stopped under its guest,
// whose socket libvirt's client writes from the caller's thread) is an error for that
// host, not the death of rig and of every guest it runs.
const std::atomic<bool>& catch_interrupts();

// Makes the database's writes wait for another process's lock for as long as it is held,
// saying on stderr who holds it, until `interrupted` (the write then fails as interrupted).
void wait_for_locks(store::Database& db, const std::atomic<bool>& interrupted);

// The words of the options that take one of a fixed set, for each option's parser and for
// the shell's completion (cli/complete.hpp), so that the two cannot disagree.
const std::map<std::string, report::PlanFormat>& plan_format_words(); // plan --format
const std::map<std::string, report::Format>& report_format_words();   // report --format
const std::map<std::string, core::Test>& test_words();                // report --test

struct GlobalOptions {
    std::filesystem::path db; // --db, RIG_DB, or rig-results/rig.db
};

int plan_command(const GlobalOptions& global, const std::filesystem::path& file,
                 report::PlanFormat format);
int doctor_command(const GlobalOptions& global);

struct RunCommandOptions {
    std::filesystem::path file; // optional with --resume: the run's stored scenario is used
    bool resume = false;
    int64_t resume_run = 0;               // 0: the newest unfinished run (of `file`, when given)
    std::optional<core::Backend> backend; // --backend; none: the scenario's
    std::vector<std::string> uris; // --uri, repeatable: replaces the scenario's uri and hosts
    int jobs = 0;                  // --jobs; 0: the scenario's
};
int run_command(const GlobalOptions& global, const RunCommandOptions& options);

// `rig sample JOBFILE`, the worker of backend slurm: runs one sample and writes its record.
// Exit 0 or 1 for a sample with a kernel or workload result (1: not ok), 3 for an infra
// error (the record says which), 2 for a job file it cannot read, 130 when stopped.
int sample_command(const std::filesystem::path& job_file);

struct ReportCommandOptions {
    std::vector<int64_t> runs; // --run, repeatable; none: the newest run
    std::vector<std::string> cells;
    std::vector<std::string> kernels;
    std::vector<std::string> where; // key=value
    std::string baseline;           // key=value
    std::string rows;               // comma-separated keys
    std::string cols;
    std::vector<std::string> metrics; // --metric, repeatable, each may be a comma list
    report::Format format = report::Format::text;
    core::Test test = core::Test::welch;
    double alpha = 0.05;
    report::View view = report::View::table;
    std::filesystem::path template_file; // --template: a user's mustache template
    std::filesystem::path output;        // "" = stdout
    std::filesystem::path history;       // --history: a watch's scenario file
};
int report_command(const GlobalOptions& global, const ReportCommandOptions& options);

} // namespace rig::cli
