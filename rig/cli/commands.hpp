// SPDX-License-Identifier: MIT
// The subcommands, each a function from parsed options to an exit code.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <string>

namespace rig::cli {

// Documented in README "Exit codes"; scripts and bisect drivers rely on them.
enum ExitCode : int {
    k_exit_ok = 0,
    k_exit_failed = 1,      // a regression was found or samples failed
    k_exit_usage = 2,       // bad command line, bad scenario
    k_exit_infra = 3,       // QEMU, libvirt, disk, git: the machinery failed
    k_exit_unavailable = 4, // the subcommand's feature has not landed yet
};

int exit_code_for(const Error& error);
int report_error(const Error& error);

struct GlobalOptions {
    std::filesystem::path db; // --db, RIG_DB, or rig-results/rig.db
};

enum class PlanFormatOption { text, json };

int plan_command(const GlobalOptions& global, const std::filesystem::path& file,
                 PlanFormatOption format);
int doctor_command(const GlobalOptions& global);

struct RunCommandOptions {
    std::filesystem::path file; // optional with --resume: the run's stored scenario is used
    bool resume = false;
    int64_t resume_run = 0; // 0: the newest unfinished run (of `file`, when given)
};
int run_command(const GlobalOptions& global, const RunCommandOptions& options);
int unavailable_command(const std::string& name, const std::string& issue);

} // namespace rig::cli
