// SPDX-License-Identifier: MIT
// Out-of-tree kernel modules (`module:` workloads) built against a cell's kernel: a git
// kernel's own tree and build folder, a Debian kernel's headers packages (fetched once),
// an image kernel's `build:` folder. Built modules are cached by source and kernel.
#pragma once

#include "core/scenario.hpp"
#include "kernel/artifact.hpp"
#include "kernel/build.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rig::kernel {

enum class ModuleOutcome { ok, build_failed };

struct ModuleBuild {
    ModuleOutcome outcome = ModuleOutcome::ok;
    std::filesystem::path ko; // when ok: the cached module
    std::string error_lines;  // when build_failed: the compiler's first errors
    bool cache_hit = false;
};

// The sha256 of a module's source (a .c file, or every file of a folder): each file's
// path relative to it and its bytes, in path order.
Expected<std::string> module_source_hash(const std::filesystem::path& source);

// The cache key of a module source built for one kernel artifact.
std::string module_cache_key(const std::string& source_hash, const std::string& artifact_id);

// `make -C TREE [O=OUT] M=MODULE_DIR [EXTRA...] modules`: TREE is a source tree whose
// build folder is OUT, or a headers or build folder on its own when OUT is empty.
std::vector<std::string> module_make_argv(const std::filesystem::path& tree,
                                          const std::filesystem::path& out,
                                          const std::filesystem::path& module_dir,
                                          const std::vector<std::string>& extra = {});

// Copies a module source into `dir` as a Kbuild folder: a folder as it is (it must have
// a Kbuild or Makefile), a lone FILE.c with a Kbuild of `obj-m := FILE.o`.
Expected<void> stage_module_source(const std::filesystem::path& source,
                                   const std::filesystem::path& dir);

// Debian kernel `artifact`'s headers: linux-headers-RELEASE, its -common and kbuild
// packages, downloaded once (sha256-checked) and unpacked into cache/headers/RELEASE.
// Returns the folder `make -C` takes. A second call downloads nothing.
Expected<std::filesystem::path> debian_headers(const Artifact& artifact,
                                               const std::filesystem::path& cache,
                                               const Status& status = {});

// The module at `source` built for the cell's kernel (`kernel` as the scenario gave it,
// `fragments` the cell's, `artifact` what it resolved to), or the cached build of the
// same source for the same artifact. A module that does not compile is a result
// (build_failed, with the compiler's lines), not an error.
Expected<ModuleBuild> module_for(const std::filesystem::path& source, const core::Kernel& kernel,
                                 const std::vector<std::string>& fragments,
                                 const std::filesystem::path& scenario_dir,
                                 const Artifact& artifact, const BuildSettings& settings,
                                 const Status& status = {});

} // namespace rig::kernel
