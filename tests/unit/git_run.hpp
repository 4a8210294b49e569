// SPDX-License-Identifier: MIT
// git in a unit test's scratch repository, with a fixed identity.
#pragma once

#include "proc/process.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace rig::test {

// Runs git with `args` in `repo`, which must succeed; its stdout without the final newline.
inline std::string git(const std::filesystem::path& repo, std::vector<std::string> args) {
    args.insert(args.begin(), "git");
    proc::RunOptions options;
    options.cwd = repo;
    options.env = {{"GIT_AUTHOR_NAME", "t"},
                   {"GIT_AUTHOR_EMAIL", "t@t"},
                   {"GIT_COMMITTER_NAME", "t"},
                   {"GIT_COMMITTER_EMAIL", "t@t"}};
    auto result = proc::run(args, options);
    EXPECT_TRUE(result && result->exit_code == 0) << (result ? result->err : "");
    std::string out = result ? result->out : "";
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

} // namespace rig::test
