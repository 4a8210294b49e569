// SPDX-License-Identifier: MIT
// A one-node Slurm cluster for a test, through scripts/start-slurm as CI runs it: started
// when made, stopped (its jobs cancelled, its daemons gone) when destroyed. Clients,
// rig among them, find it through SLURM_CONF.
#pragma once

#include "proc/process.hpp"
#include "scratch.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>

namespace rig::test {

class SlurmCluster final {
public:
    SlurmCluster() {
        // Ports of its own, so that a Slurm the machine runs is not disturbed.
        ::setenv("SLURM_PORTS", "16817,16818", 1);
        auto started = script({dir().string()});
        EXPECT_EQ(started.exit_code, 0) << started.out << started.err;
        ::setenv("SLURM_CONF", (dir() / "slurm.conf").c_str(), 1);
    }
    ~SlurmCluster() {
        auto stopped = script({"--stop", dir().string()});
        EXPECT_EQ(stopped.exit_code, 0) << stopped.out << stopped.err;
        EXPECT_TRUE(processes_mentioning(dir().string()).empty());
    }
    SlurmCluster(const SlurmCluster&) = delete;
    SlurmCluster& operator=(const SlurmCluster&) = delete;

    static std::filesystem::path dir() {
        const char* root = std::getenv("RIG_BUILD_ROOT");
        return std::filesystem::path(root ? root : "/tmp") / "test-runs" / "slurm-cluster";
    }

private:
    static proc::RunResult script(const std::vector<std::string>& args) {
        std::vector<std::string> argv{(source_root() / "scripts/start-slurm").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        proc::RunOptions options;
        options.timeout = std::chrono::minutes(2);
        auto result = proc::run(argv, options);
        EXPECT_TRUE(result) << (result ? "" : result.error().message);
        return result ? *result : proc::RunResult{};
    }
};

} // namespace rig::test
