// SPDX-License-Identifier: MIT
// The schema's migration scripts, kept apart from the code that runs them.
#pragma once

#include <string>
#include <vector>

namespace rig::store {

// Script i turns a database at version i into one at version i + 1. Append only: a script
// that was released never changes, because databases in the field already ran it.
const std::vector<std::string>& migrations();

// The version whose script creates the per-cell aggregates: the migration to it also fills
// them from the samples already stored, which only C++ can (core::figure_values).
inline constexpr int k_cell_aggregates_version = 10;

} // namespace rig::store
