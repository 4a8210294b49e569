// SPDX-License-Identifier: MIT
// Whole files as strings.
#pragma once

#include <filesystem>
#include <string>

namespace rig::util {

// The bytes of `path`; empty when it cannot be read (callers that care check existence).
std::string read_file(const std::filesystem::path& path);

} // namespace rig::util
