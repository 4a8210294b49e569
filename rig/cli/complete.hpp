// SPDX-License-Identifier: MIT
// `rig complete -- WORD...`, hidden: what bash may offer for the word being typed
// (completion/rig asks it at every Tab), read from rig's own command-line definitions so
// that the completion cannot drift from them.
#pragma once

#include "cli/commands.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace rig::cli {

// Asks the shell for file names rather than words: any file, or scenario files (*.yaml
// and folders).
inline constexpr const char* k_complete_files = "@file";
inline constexpr const char* k_complete_scenarios = "@yaml";

// The candidates for the last of `words` (the command line after `rig`, the last being the
// partial word, perhaps empty), each starting with it: subcommands, options, an option's
// values, run ids (--run, --resume) and bisect ids from the database (`--db` among the
// words, else `db`), or one of the file requests above.
std::vector<std::string> completions(const CLI::App& app, const std::vector<std::string>& words,
                                     const std::filesystem::path& db);

// Prints completions() one per line; always exits 0, since a shell has no use for errors.
int complete_command(const CLI::App& app, const GlobalOptions& global,
                     std::vector<std::string> words);

} // namespace rig::cli
