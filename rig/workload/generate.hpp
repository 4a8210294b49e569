// SPDX-License-Identifier: MIT
// A deterministic C project, sized by parameters, for compile workloads over the share.
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"

#include <filesystem>

namespace rig::workload {

// Writes units/unit_N.c, include/common_N.h, main.c and a Makefile into `dir`. The same
// parameters always give the same bytes, so samples compile the same thing.
Expected<void> write_generated_project(const std::filesystem::path& dir,
                                       const core::GenerateParams& params);

} // namespace rig::workload
