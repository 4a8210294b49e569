// SPDX-License-Identifier: MIT
// Internal to kernel/: a build folder configured for a request, with make's own targets.
#pragma once

#include "kernel/builder.hpp"
#include "kernel/config.hpp"
#include "kernel/confine.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rig::kernel {

// tinyconfig (its .config kept in `cache` for the tree's Kconfig inputs and the
// toolchain), the fragments and options merged in, olddefconfig, in the tree's build
// folder, confined. Returns the options that did not survive olddefconfig (empty when all
// did) and the resolved values. `compiler` is the toolchain the request resolved to.
//
// Skipped when the folder's last configure had the same inputs (the request, the tree's
// Kconfig inputs, the toolchain) and its .config is unchanged since: equal inputs give an
// equal .config, and the two makes are half of an incremental build (17 s of 34 s on two
// cores). The record of those inputs lies beside the build folder, not in it, where the
// tree's own make could forge it.
Expected<std::pair<std::vector<std::string>, ConfigValues>>
configure(const ConfinedTree& tree, const RequestedConfig& config, const std::string& compiler,
          const std::filesystem::path& cache, Builder& builder);

// What olddefconfig reads besides the request, named by content: the blob ids of every
// Kconfig file, of the top Makefile, of the tinyconfig fragments and of the scripts Kconfig
// runs ($(shell) and $(success) call scripts/ and arch/*/tools/), at the clone's HEAD (rig's
// clone is clean, with its patches as commits), and the linker's version, which Kconfig
// also records.
Expected<std::string> kconfig_inputs(const std::filesystem::path& src);

} // namespace rig::kernel
