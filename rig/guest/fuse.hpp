// SPDX-License-Identifier: MIT
// Where the rig-fuse daemon of fuse cells lives on the host (its options are the fuse
// row's daemon_options, core/fs/fuse.cpp).
#pragma once

#include "core/cell.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rig::guest {

// rig-fuse next to the running rig: guests/rig-fuse in the build tree (rig is
// rig/cli/rig there) or ../libexec/rig/rig-fuse after `meson install`. Absolute,
// because the guest runs it at its host path.
Expected<std::filesystem::path> find_fuse_daemon();

} // namespace rig::guest
