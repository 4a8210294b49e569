// SPDX-License-Identifier: MIT
// A one-node Slurm cluster for a test, through scripts/start-slurm as CI runs it: started
// when made, stopped (its jobs cancelled, its daemons gone) when destroyed. Clients,
// rig among them, find it through SLURM_CONF.
#pragma once

#include "proc/process.hpp"
#include "scratch.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>
#include <thread>

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
        // A job's processes, or a daemon killed at the end of its 10 s, may take a moment
        // more to go once the daemons have: only what stays is left behind. Its daemons
        // name files in the folder: "slurm-cluster/", never another suite's
        // "slurm-cluster-watch" that runs at the same time.
        const std::string inside = (m_dir / "").string();
        for (int i = 0; i < 100 && !processes_mentioning(inside).empty(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::string left;
        for (int pid : processes_mentioning(inside))
            left += "\n  " + command_line(pid);
        EXPECT_TRUE(left.empty()) << "left running once the cluster stopped:" << left;
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

    // Its arguments, NULs as spaces.
    static std::string command_line(int pid) {
        std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::replace(text.begin(), text.end(), '\0', ' ');
        return std::to_string(pid) + " " + text;
    }

    std::filesystem::path m_dir;
};

} // namespace rig::test
