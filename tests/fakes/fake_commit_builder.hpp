// SPDX-License-Identifier: MIT
// A CommitBuilder for unit tests of the bisect driver: every commit "builds" at once into
// an empty image named after it (so a FakeHypervisor can script its guests by commit),
// except the commits the test says do not build.
#pragma once

#include "bisect/builder.hpp"

#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rig::test {

class FakeCommitBuilder final : public bisect::CommitBuilder {
public:
    explicit FakeCommitBuilder(std::filesystem::path dir);

    Expected<std::optional<kernel::BuildResult>>
    build(const kernel::GitRequest& request, const std::string& kernel_name,
          const std::string& prefix, std::ostream& out,
          const std::atomic<bool>& interrupted) override;
    // The options as the .config, wishes and all: no olddefconfig to drop any.
    Expected<kernel::ConfigResult> configure(const kernel::GitRequest& request,
                                             std::ostream& out) override;
    Expected<std::filesystem::path> initramfs(const kernel::Artifact& artifact) override;
    // Charges the build as a first build() would, on the caller's thread.
    Expected<void> build_ahead(const kernel::GitRequest& request, int jobs,
                               const std::atomic<bool>& interrupted) override;

    std::set<std::string> broken;   // commits that fail to build
    std::vector<std::string> built; // each commit asked for, in order
    std::vector<std::string> ahead; // each commit built ahead, in order
    // What a model of a host charges (tests/bench/bisect-model), in real time: a commit's
    // first build (later ones are cache hits), and every step's preparation (checkout,
    // initramfs, rig's own work).
    std::chrono::milliseconds build_cost{0};
    std::chrono::milliseconds step_cost{0};
    // A build ahead's cost; build_cost unless set.
    std::optional<std::chrono::milliseconds> ahead_cost;
    // Builds already paid for: cache hits from the start (a GOOD the suites built before).
    std::set<std::string> charged;
    int steps_prepared = 0; // initramfs() calls: one a step

    // The commit a guest of this builder's kernels boots, from its image's name.
    static std::string commit_of(const std::filesystem::path& boot_image);

private:
    // charged and ahead, which build_ahead's thread writes too.
    std::mutex m_mutex;
    std::filesystem::path m_dir;
    int m_configs = 0;
};

} // namespace rig::test
