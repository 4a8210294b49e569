// SPDX-License-Identifier: MIT
// Rendering of an expanded matrix for `rig plan`.
#pragma once

#include "core/cell.hpp"
#include "core/scenario.hpp"

#include <string>
#include <vector>

namespace rig::report {

enum class PlanFormat { text, json };

std::string render_plan(const core::Scenario& scenario, const std::vector<core::Cell>& cells,
                        PlanFormat format);

// One line describing the workload, for tables and progress lines.
std::string describe_workload(const core::Workload& workload);

} // namespace rig::report
