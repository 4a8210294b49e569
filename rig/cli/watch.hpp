// SPDX-License-Identifier: MIT
// `rig watch FILE`, `rig watch --once FILE` and `rig watch status`.
#pragma once

#include "cli/commands.hpp"

#include <filesystem>

namespace CLI {
class App;
}

namespace rig::cli {

struct WatchCommandOptions {
    bool chosen = false;
    bool status = false;
    bool once = false;
    std::filesystem::path file;
};

void add_watch_command(CLI::App& app, WatchCommandOptions& options);
// Exit codes: --once 0 when the round found nothing to report, 1 when it reported a
// regression or left a head suspect, 3 on infra errors, 130 when stopped; the long-running
// watcher 0 when stopped by SIGTERM or Ctrl-C between rounds.
int watch_command(const GlobalOptions& global, const WatchCommandOptions& options);

} // namespace rig::cli
