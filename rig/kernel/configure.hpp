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

// tinyconfig, the fragments and options merged in, olddefconfig, in the tree's build
// folder, confined. Returns the options that did not survive olddefconfig (empty when all
// did) and the resolved values.
Expected<std::pair<std::vector<std::string>, ConfigValues>>
configure(const ConfinedTree& tree, const RequestedConfig& config, Builder& builder);

} // namespace rig::kernel
