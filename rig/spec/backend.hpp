// SPDX-License-Identifier: MIT
// The `backend:`, `uri:`, `hosts:` and `slurm:` keys: where the samples run.
#pragma once

#include "core/scenario.hpp"
#include "spec/yaml_reader.hpp"
#include "util/error.hpp"

#include <vector>

namespace rig::spec {

// Reads the backend keys among the top-level `entries` into `scenario`; each applies
// to its own backend only.
Expected<void> read_backend(const Context& context, const std::vector<Entry>& entries,
                            core::Scenario& scenario);

} // namespace rig::spec
