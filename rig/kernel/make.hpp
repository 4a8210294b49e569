// SPDX-License-Identifier: MIT
// Internal to kernel/: the kernel's make run in its build folder. progress_text, the
// cold-build stats, first_errors and is_object_line (kernel/build.hpp) live beside it.
#pragma once

#include "kernel/build.hpp"
#include "kernel/builder.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rig::kernel {

// Runs make in the build folder with its output in the build log. Returns the first compiler
// errors when make failed. A cold build's object count and time are kept for the next
// one's progress line.
Expected<std::optional<std::string>> run_make(Builder& builder,
                                              const std::vector<std::string>& make_base,
                                              bool modules, const std::filesystem::path& out,
                                              const BuildSettings& settings,
                                              const std::string& config_hash);

} // namespace rig::kernel
