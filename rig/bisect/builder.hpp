// SPDX-License-Identifier: MIT
// Where a bisect's commits are built and made bootable: the seam between the driver and the
// kernel builder, so that the whole driver runs in unit tests with a fake.
#pragma once

#include "kernel/artifact.hpp"
#include "kernel/build.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace rig::bisect {

class CommitBuilder {
public:
    virtual ~CommitBuilder() = default;
    // The build of `request`'s commit, recorded; a commit that does not build is a result,
    // not an error. nullopt when Ctrl-C stopped it. Phases go to `out` after `prefix`.
    virtual Expected<std::optional<kernel::BuildResult>>
    build(const kernel::GitRequest& request, const std::string& kernel_name,
          const std::string& prefix, std::ostream& out, const std::atomic<bool>& interrupted) = 0;
    // The .config `request` resolves to through olddefconfig, without a build: a config
    // bisect's two sides. Options that do not survive are a result, as in build().
    virtual Expected<kernel::ConfigResult> configure(const kernel::GitRequest& request,
                                                     std::ostream& out) = 0;
    // The base initramfs a guest of `artifact` boots with.
    virtual Expected<std::filesystem::path> initramfs(const kernel::Artifact& artifact) = 0;
    // Builds `request`'s commit into the cache with make -j`jobs` and records nothing, on
    // another thread while a step's guests run: the step that later needs it finds a cache
    // hit and records that. A commit that does not build leaves nothing; its step builds it
    // again and fails.
    virtual Expected<void> build_ahead(const kernel::GitRequest& request, int jobs,
                                       const std::atomic<bool>& interrupted) = 0;
};

// The real one: kernel::build_git into `cache`, each build recorded in `db`.
std::unique_ptr<CommitBuilder> make_commit_builder(const std::filesystem::path& cache,
                                                   store::Database& db);

} // namespace rig::bisect
