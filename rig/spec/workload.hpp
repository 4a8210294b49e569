// SPDX-License-Identifier: MIT
// The `workload:` key: what each sample runs, generated, copied or a module.
#pragma once

#include "core/scenario.hpp"
#include "spec/yaml_reader.hpp"
#include "util/error.hpp"

#include <string>
#include <vector>

namespace rig::spec {

// What a generated workload runs when the scenario names no command.
inline const std::string k_default_generate_command = "make -j2";

Expected<core::Workload> read_workload(const Context& context, const Entry& entry);

} // namespace rig::spec
