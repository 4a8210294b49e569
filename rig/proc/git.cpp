// SPDX-License-Identifier: MIT
// The one way rig runs git.
#include "proc/git.hpp"

namespace rig::proc {

const std::map<std::string, std::string>& git_environment() {
    // git prints messages in the user's language unless told otherwise, and rig reads them.
    static const std::map<std::string, std::string> environment{{"LC_ALL", "C"},
                                                                {"GIT_PAGER", "cat"},
                                                                {"GIT_EDITOR", "true"},
                                                                {"GIT_TERMINAL_PROMPT", "0"}};
    return environment;
}

Expected<RunResult> run_git(const std::vector<std::string>& args, RunOptions options) {
    std::vector<std::string> argv{"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    for (const auto& [key, value] : git_environment())
        options.env[key] = value;
    return run(argv, options);
}

} // namespace rig::proc
