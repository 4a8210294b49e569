// SPDX-License-Identifier: MIT
// A CommitBuilder for unit tests of the bisect driver: every commit "builds" at once into
// an empty image named after it (so a FakeHypervisor can script its guests by commit),
// except the commits the test says do not build.
#pragma once

#include "bisect/builder.hpp"

#include <filesystem>
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
    Expected<std::filesystem::path> initramfs(const kernel::Artifact& artifact) override;

    std::set<std::string> broken;   // commits that fail to build
    std::vector<std::string> built; // each commit asked for, in order

    // The commit a guest of this builder's kernels boots, from its image's name.
    static std::string commit_of(const std::filesystem::path& boot_image);

private:
    std::filesystem::path m_dir;
};

} // namespace rig::test
