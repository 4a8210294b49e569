// SPDX-License-Identifier: MIT
// `rig report`'s command-line options, kept beside the command so that main stays a list.
#pragma once

#include "cli/commands.hpp"

namespace CLI {
class App;
}

namespace rig::cli {

void add_report_options(CLI::App& command, ReportCommandOptions& options);

} // namespace rig::cli
