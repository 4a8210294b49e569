// SPDX-License-Identifier: MIT
// Runs the built rig binary from the source root, as a user would.
#pragma once

#include "golden.hpp"
#include "proc/process.hpp"

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <sys/prctl.h>
#include <unistd.h>
#include <vector>

namespace rig::test {

// `env` is added to the test's environment (RIG_CACHE for a cache of the test's own).
inline proc::RunResult run_rig(std::vector<std::string> args,
                               std::chrono::milliseconds timeout = std::chrono::minutes(2),
                               const std::map<std::string, std::string>& env = {}) {
    const char* binary = std::getenv("RIG_BINARY");
    EXPECT_NE(binary, nullptr) << "RIG_BINARY is set by meson test";
    args.insert(args.begin(), binary ? binary : "rig");
    proc::RunOptions options;
    options.cwd = source_root();
    options.timeout = timeout;
    options.env = env;
    auto result = proc::run(args, options);
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    return result ? *result : proc::RunResult{};
}

// The line of `rig doctor`'s table for `check`, or "".
inline std::string doctor_line(const std::string& out, const std::string& check) {
    for (size_t start = 0; start < out.size();) {
        size_t end = std::min(out.find('\n', start), out.size());
        if (out.compare(start, check.size() + 1, check + " ") == 0)
            return out.substr(start, end - start);
        start = end + 1;
    }
    return "";
}

// Starts rig in the background, its output in `log`, for a test that kills it with -9
// (proc::Child would take it down cleanly). It dies with the test, as QEMU dies with rig.
inline pid_t start_rig_logged(std::vector<std::string> args, const std::filesystem::path& log) {
    const char* binary = std::getenv("RIG_BINARY");
    EXPECT_NE(binary, nullptr) << "RIG_BINARY is set by meson test";
    args.insert(args.begin(), binary ? binary : "rig");
    std::vector<char*> argv;
    for (auto& arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::string root = source_root().string();
    pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || ::chdir(root.c_str()) != 0)
            ::_exit(127);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return pid;
}

} // namespace rig::test
