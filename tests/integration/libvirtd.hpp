// SPDX-License-Identifier: MIT
// scripts/start-libvirtd, as CI runs it, for the suites that run guests through libvirt.
#pragma once

#include "golden.hpp"
#include "proc/process.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace rig::test {

// Starts the machine's daemon (no arguments), or a separate instance whose URI it prints
// (`--instance DIR`); returns the last line of what the script printed.
inline std::string start_libvirtd(const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv{(source_root() / "scripts/start-libvirtd").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    proc::RunOptions options;
    options.timeout = std::chrono::minutes(1);
    auto result = proc::run(argv, options);
    EXPECT_TRUE(result && result->exit_code == 0)
        << (result ? result->out + result->err : result.error().message);
    if (!result)
        return "";
    std::string out = result->out;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out.substr(out.rfind('\n') + 1);
}

} // namespace rig::test
