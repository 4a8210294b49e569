// SPDX-License-Identifier: MIT
// `rig kernel build|list|gc`: git kernels and the artifact cache from the command line.
#pragma once

#include "cli/commands.hpp"

#include <filesystem>

namespace CLI {
class App;
}

namespace rig::cli {

enum class KernelAction { none, build, list, gc };

struct KernelCommandOptions {
    KernelAction action = KernelAction::none;
    std::filesystem::path file;  // build: the scenario whose git kernels are built
    int jobs = 0;                // build: make -j; 0 = every CPU
    double older_than_days = 30; // gc: what was not used for this long; 0 = everything
};

// Adds `kernel` with its three subcommands to `app`.
void add_kernel_command(CLI::App& app, KernelCommandOptions& options);
int kernel_command(const GlobalOptions& global, const KernelCommandOptions& options);

} // namespace rig::cli
