// SPDX-License-Identifier: MIT
// A stand-in filesystem, added the way a new one is: this one file and nothing else. The
// fs_table test links it beside rig's own rows.
#include "core/fs.hpp"

namespace rig::core {

namespace {

const FsRegistrar k_fakefs{{
    .name = "fakefs",
    .listed = 3,
    .caches = {{"strict", "", ""}, {"lazy", "lazy", ""}},
    .default_cache = "strict",
    .axes = {"msize"},
    .share = ShareKind::virtiofs,
    .daemon = Daemon::host,
    .daemon_name = "fakefsd",
    .daemon_options = {},
    .counter = Counter::virtiofsd_log,
    .mount = GuestMount::kernel,
    .fstype = "fakefs",
    .mount_options = nullptr,
    .names_share = false,
    .marks_in_share = true,
    .shows_negotiated = true,
    .modules = {"fakefs"},
    .log_words = {"fakefs:"},
    .functions = {},
}};

} // namespace

} // namespace rig::core
