// SPDX-License-Identifier: MIT
// Handing files to the user a confined child runs as (proc::Confinement), and back.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <sys/types.h>

namespace rig::proc {

// `path` itself (a link, never its target) belongs to uid:gid afterwards.
Expected<void> give(const std::filesystem::path& path, uid_t uid, gid_t gid);

// `path` and, when it is a folder, all it holds. Entries already theirs are only looked
// at: a second hand-over of a kernel build folder costs a walk, not a write per file.
Expected<void> give_all(const std::filesystem::path& path, uid_t uid, gid_t gid);

} // namespace rig::proc
