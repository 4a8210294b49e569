// SPDX-License-Identifier: MIT
// Internal to kernel/: a build folder configured for a request, with make's own targets.
#pragma once

#include "kernel/builder.hpp"
#include "kernel/config.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rig::kernel {

// tinyconfig, the fragments and options merged in, olddefconfig. Returns the options that
// did not survive olddefconfig (empty when all did) and the resolved values.
Expected<std::pair<std::vector<std::string>, ConfigValues>>
configure(const std::filesystem::path& src, const std::filesystem::path& out,
          const RequestedConfig& config, Builder& builder);

} // namespace rig::kernel
