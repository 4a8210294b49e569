// SPDX-License-Identifier: MIT
// `rig bisect start|resume|status|report|log`: unattended, resumable kernel bisects.
#pragma once

#include "bisect/bisect.hpp"
#include "cli/commands.hpp"

namespace CLI {
class App;
}

namespace rig::cli {

enum class BisectAction { none, start, resume, status, report, log };

struct BisectCommandOptions {
    BisectAction action = BisectAction::none;
    bisect::StartOptions start;
    int64_t id = 0; // resume, report, log; status: 0 = every bisect
    // report: also write the report as a reply to the series' cover letter, from `from`.
    std::string reply;
    std::string from = "rig bisect <rig@localhost>";
};

// Results beside the database, kernels in the user's cache, rig's own binary for Slurm.
bisect::Settings bisect_settings(const GlobalOptions& global);

// Adds `bisect` with its subcommands to `app`.
void add_bisect_command(CLI::App& app, BisectCommandOptions& options);
// Exit codes: 0 culprit found and verified, 1 no verified culprit (not reproducible,
// inconclusive, unverified), 3 stopped by infra errors, 130 interrupted.
int bisect_command(const GlobalOptions& global, const BisectCommandOptions& options);

} // namespace rig::cli
