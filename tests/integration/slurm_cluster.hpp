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
#include <string>

namespace rig::test {

class SlurmCluster final {
public:
    // `name`: its folder under test-runs; `ports`: slurmctld's and slurmd's, "A,B". Two
    // suites that run at once each start a cluster of their own.
    explicit SlurmCluster(std::string name = "slurm-cluster", std::string ports = "16817,16818")
        : m_dir(root() / name) {
        // Ports of its own, so that a Slurm the machine runs is not disturbed.
        ::setenv("SLURM_PORTS", ports.c_str(), 1);
        auto started = script({m_dir.string()});
        EXPECT_EQ(started.exit_code, 0) << started.out << started.err;
        ::setenv("SLURM_CONF", (m_dir / "slurm.conf").c_str(), 1);
    }
    ~SlurmCluster() {
        auto stopped = script({"--stop", m_dir.string()});
        EXPECT_EQ(stopped.exit_code, 0) << stopped.out << stopped.err;
        EXPECT_TRUE(processes_mentioning(m_dir.string()).empty());
    }
    SlurmCluster(const SlurmCluster&) = delete;
    SlurmCluster& operator=(const SlurmCluster&) = delete;

    const std::filesystem::path& dir() const { return m_dir; }

private:
    static std::filesystem::path root() {
        const char* build = std::getenv("RIG_BUILD_ROOT");
        return std::filesystem::path(build ? build : "/tmp") / "test-runs";
    }

    static proc::RunResult script(const std::vector<std::string>& args) {
        std::vector<std::string> argv{(source_root() / "scripts/start-slurm").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        proc::RunOptions options;
        options.timeout = std::chrono::minutes(2);
        auto result = proc::run(argv, options);
        EXPECT_TRUE(result) << (result ? "" : result.error().message);
        return result ? *result : proc::RunResult{};
    }

    std::filesystem::path m_dir;
};

} // namespace rig::test
