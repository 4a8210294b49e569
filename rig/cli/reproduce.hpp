// SPDX-License-Identifier: MIT
// `rig reproduce RUN`: one sample of a run packed as a reproducer that boots without rig.
#pragma once

#include "cli/commands.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace rig::cli {

struct ReproduceCommandOptions {
    int64_t run = 0;
    std::string cell;              // a filter as report's --cell takes; "": the run's one cell
    std::optional<int> repetition; // none: the first sample that kept its recipe
    std::filesystem::path output;  // "": rig-run<RUN>-<cell>-<repetition>.repro.tar.gz
};

// Returns the subcommand, whose count says whether it was chosen.
CLI::App* add_reproduce_command(CLI::App& app, ReproduceCommandOptions& options);
int reproduce_command(const GlobalOptions& global, const ReproduceCommandOptions& options);

} // namespace rig::cli
