// SPDX-License-Identifier: MIT
// Internal to kernel/: the kernel's make run in its build folder. progress_text, the
// cold-build stats, first_errors and is_object_line (kernel/build.hpp) live beside it.
#pragma once

#include "kernel/build.hpp"
#include "kernel/builder.hpp"
#include "kernel/confine.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rig::kernel {

// What every make on a git tree adds to its command line and environment: ccache when
// there is one (its folder in rig's cache, made writable in `tree`), and the build
// identity that keeps images reproducible.
struct MakeTools {
    std::vector<std::string> args;
    std::map<std::string, std::string> env;
};
MakeTools make_tools(ConfinedTree& tree, const BuildSettings& settings);

// Runs make for `target` (image_target: vmlinux or bzImage) in the tree's build folder,
// confined, with its output in the build log. Returns the first compiler errors when make
// failed. A cold build's object count and time are kept for the next one's progress line.
Expected<std::optional<std::string>> run_make(Builder& builder, ConfinedTree& tree,
                                              const std::string& target, bool modules,
                                              const BuildSettings& settings,
                                              const std::string& config_hash);

} // namespace rig::kernel
