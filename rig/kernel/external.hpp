// SPDX-License-Identifier: MIT
// Out-of-tree modules built against a git kernel's own tree and build folder.
#pragma once

#include "core/status.hpp"
#include "kernel/build.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>

namespace rig::kernel {

struct ExternalBuild {
    core::BuildOutcome outcome = core::BuildOutcome::ok;
    std::string error_lines; // the compiler's first errors, or why the tree is unfit
};

// Builds the out-of-tree module staged in `module_dir` (kernel/module.hpp) against the
// request's kernel, under the repository's lock: rig's clone is checked out at the
// commit with the patches, the build folder of the config configured again and
// `modules_prepare`d, then `make -C src O=build M=module_dir modules`. A kernel without
// CONFIG_MODULES, or a patch that does not apply, is config_error.
Expected<ExternalBuild> build_external_module(const GitRequest& request,
                                              const BuildSettings& settings,
                                              const std::filesystem::path& module_dir);

} // namespace rig::kernel
