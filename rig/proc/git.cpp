// SPDX-License-Identifier: MIT
// The one way rig runs git.
#include "proc/git.hpp"

namespace rig::proc {

const std::map<std::string, std::string>& git_environment() {
    // git prints messages in the user's language unless told otherwise, and rig reads them.
    // Repositories come from scenarios rig is handed: their transports are allow-listed
    // here, whatever git's configuration allows.
    static const std::map<std::string, std::string> environment{
        {"LC_ALL", "C"},
        {"GIT_PAGER", "cat"},
        {"GIT_EDITOR", "true"},
        {"GIT_TERMINAL_PROMPT", "0"},
        {"GIT_ALLOW_PROTOCOL", std::string(k_git_protocols)}};
    return environment;
}

Expected<RunResult> run_git(const std::vector<std::string>& args, RunOptions options) {
    std::vector<std::string> argv{"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const auto& [key, value] : git_environment())
        options.env[key] = value;
    return run(argv, options);
}

Expected<void> check_git_operand(std::string_view value, std::string_view what) {
    if (value.empty())
        return fail(ErrorKind::config, "empty " + std::string(what));
    if (value.front() == '-')
        return fail(ErrorKind::config, std::string(what) + " '" + std::string(value) +
                                           "' starts with '-', which git would read as an "
                                           "option");
    return {};
}

} // namespace rig::proc
