// SPDX-License-Identifier: MIT
// `rig kernel build|config|fetch|list|gc`: kernels and the artifact cache from the command
// line.
#pragma once

#include "cli/commands.hpp"

#include <filesystem>

namespace CLI {
class App;
}

namespace rig::cli {

enum class KernelAction { none, build, config, fetch, list, gc };

struct KernelCommandOptions {
    KernelAction action = KernelAction::none;
    std::filesystem::path file;  // build, config, fetch: the scenario whose kernels are meant
    int jobs = 0;                // build: make -j; 0 = every CPU
    double older_than_days = 30; // gc: what was not used for this long; 0 = everything
};

// Adds `kernel` with its subcommands to `app`.
void add_kernel_command(CLI::App& app, KernelCommandOptions& options);
int kernel_command(const GlobalOptions& global, const KernelCommandOptions& options);

} // namespace rig::cli
