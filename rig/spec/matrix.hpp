// SPDX-License-Identifier: MIT
// The `matrix:`, `exclude:` and `include:` keys, and the checks only the whole matrix allows.
#pragma once

#include "core/scenario.hpp"
#include "spec/yaml_reader.hpp"
#include "util/error.hpp"

#include <vector>

namespace rig::spec {

Expected<std::vector<core::AxisValues>> read_matrix(const Context& context, const Entry& entry);

// `exclude:` or `include:`: rules naming axes and kernels of `kernels`.
Expected<std::vector<core::Rule>> read_rules(const Context& context, const Entry& entry,
                                             const std::vector<core::Kernel>& kernels);

// With cache given per fs, every fs of the matrix and of the include rules has its modes.
Expected<void> check_cache_covers_fs(const Context& context, const core::Scenario& scenario);

// A matrix of a bounded number of cells, counted before exclusions without expanding.
Expected<void> check_size(const Context& context, const core::Scenario& scenario);

} // namespace rig::spec
