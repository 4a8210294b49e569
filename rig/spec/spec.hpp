// SPDX-License-Identifier: MIT
// Scenario YAML to core::Scenario. The only folder that includes yaml-cpp.
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace rig::spec {

// Every error is ErrorKind::config with "FILE:LINE:COL: key.path: message".
// No input throws or crashes: yaml-cpp's exceptions stop here.
Expected<core::Scenario> load_scenario(const std::filesystem::path& file);
Expected<core::Scenario> parse_scenario(std::string_view text, const std::string& file_label);

} // namespace rig::spec
