// SPDX-License-Identifier: MIT
// Runs the built rig binary from the source root, as a user would.
#pragma once

#include "golden.hpp"
#include "proc/process.hpp"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace rig::test {

inline proc::RunResult run_rig(std::vector<std::string> args,
                               std::chrono::milliseconds timeout = std::chrono::minutes(2)) {
    const char* binary = std::getenv("RIG_BINARY");
    EXPECT_NE(binary, nullptr) << "RIG_BINARY is set by meson test";
    args.insert(args.begin(), binary ? binary : "rig");
    proc::RunOptions options;
    options.cwd = source_root();
    options.timeout = timeout;
    auto result = proc::run(args, options);
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? *result : proc::RunResult{};
}

} // namespace rig::test
