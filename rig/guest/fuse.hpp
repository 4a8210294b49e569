// SPDX-License-Identifier: MIT
// What a fuse cell hands the guest: rig-fuse's options from the cell's knob axes, and
// where the rig-fuse daemon lives on the host.
#pragma once

#include "core/cell.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rig::guest {

// rig-fuse options for the knob axes the cell sets, in axis order; an axis the cell
// does not set is left to the daemon's default. Values are the canonical axis texts.
std::vector<std::string> fuse_arguments(const core::Cell& cell);

// rig-fuse next to the running rig: guests/rig-fuse in the build tree (rig is
// rig/cli/rig there) or ../libexec/rig/rig-fuse after `meson install`. Absolute,
// because the guest runs it at its host path.
Expected<std::filesystem::path> find_fuse_daemon();

} // namespace rig::guest
