// SPDX-License-Identifier: MIT
// The `watch:` key: the branch `rig watch` follows and where its reports go.
#pragma once

#include "core/scenario.hpp"
#include "spec/yaml_reader.hpp"
#include "util/error.hpp"

namespace rig::spec {

// Needs the scenario's kernels: the entry it follows must be a git kernel.
Expected<core::Watch> read_watch(const Context& context, const Entry& entry,
                                 const std::vector<core::Kernel>& kernels);

} // namespace rig::spec
