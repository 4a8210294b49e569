// SPDX-License-Identifier: MIT
// Matrix expansion: kernels x applicable axes, minus exclude rules, plus include rules.
#pragma once

#include "core/cell.hpp"
#include "core/scenario.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <vector>

namespace rig::core {

// Cells in kernel order, then axis order, then value order as written. Errors name the
// offending value: a cache invalid for its fs, or a matrix left empty by exclusions.
Expected<std::vector<Cell>> expand(const Scenario& scenario);

// How many cells expand multiplies out before exclusions drop and duplicates merge some,
// without making them: at most `cap` + 1, so that a huge matrix is refused at once.
uint64_t count_cells(const Scenario& scenario, uint64_t cap);

} // namespace rig::core
