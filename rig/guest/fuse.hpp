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

// The places rig-fuse is looked for, in order, for the rig binary at `self`: the build
// tree (guests/rig-fuse, rig being rig/cli/rig there); the installed libexec folder
// relative to rig's own (LIBEXECDIR/rig as seen from BINDIR, so that a tree installed with
// a DESTDIR or moved elsewhere still finds its own); the libexec folder rig was configured
// with (rig_config.hpp).
std::vector<std::filesystem::path> fuse_daemon_places(const std::filesystem::path& self);

// rig-fuse for the running rig: the first of fuse_daemon_places() that is an executable
// file. Absolute, because the job archive copies it from there.
Expected<std::filesystem::path> find_fuse_daemon();

} // namespace rig::guest
