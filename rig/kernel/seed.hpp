// SPDX-License-Identifier: MIT
// Internal to kernel/: a config's first build folder, copied from the repository's newest
// finished one, so that make rebuilds only what the config changes.
#pragma once

#include "kernel/builder.hpp"
#include "util/error.hpp"

#include <filesystem>

namespace rig::kernel {

// When `out` does not exist and `repo_dir` has a build folder with a vmlinux, `out` becomes
// a copy of the newest one, with the paths make recorded in it moved to `out`. Nothing
// happens otherwise: make then builds from an empty folder.
Expected<void> seed_build_folder(const std::filesystem::path& repo_dir,
                                 const std::filesystem::path& out, Builder& builder);

} // namespace rig::kernel
