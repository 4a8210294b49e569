// SPDX-License-Identifier: MIT
// The `kernels:` list of a scenario: each kernel's one source and its details.
#pragma once

#include "core/scenario.hpp"
#include "spec/yaml_reader.hpp"
#include "util/error.hpp"

#include <vector>

namespace rig::spec {

// Each kernel checked, with names unique across the list.
Expected<std::vector<core::Kernel>> read_kernels(const Context& context, const Entry& entry);

} // namespace rig::spec
