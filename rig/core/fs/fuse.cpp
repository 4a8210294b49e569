// SPDX-License-Identifier: MIT
// fuse: rig's own passthrough daemon (rig-fuse) inside the guest over a local copy of the
// work share; its kernel caching is set by its knob axes, not by `cache`.
#include "core/cell.hpp"
#include "core/fs.hpp"

#include <algorithm>
#include <string>

namespace rig::core {

namespace {

const FsRegistrar k_fuse{{
    .name = "fuse",
    .listed = 2,
    .caches = {},
    .default_cache = "",
    .axes = {"entry_timeout", "attr_timeout", "negative_timeout", "keep_cache", "writeback_cache",
             "direct_io"},
    // The work folder reaches the guest over 9p, to be copied; rig-fuse serves the copy.
    .share = ShareKind::v9p,
    .daemon = Daemon::guest_fuse,
    .daemon_name = "rig-fuse",
    .daemon_options = {{"entry_timeout", "--entry-timeout", false},
                       {"attr_timeout", "--attr-timeout", false},
                       {"negative_timeout", "--negative-timeout", false},
                       {"keep_cache", "--keep-cache", true},
                       {"writeback_cache", "--writeback-cache", true},
                       {"direct_io", "--direct-io", true}},
    .counter = Counter::guest_daemon,
    .mount = GuestMount::guest_fuse,
    .fstype = "fuse",
    // The 9p mount the copy is made from: read once, so uncached.
    .mount_options =
        [](const Cell&) { return std::string("trans=virtio,version=9p2000.L,cache=none"); },
    .names_share = true,
    .marks_in_share = false,
    .shows_negotiated = false,
    .modules = {"fuse"},
    // The kernel may keep a name and its attributes for their timeouts (rig-fuse's default
    // is libfuse's, 1 s); without keep_cache an open drops the file's pages.
    .coherence =
        [](const Cell& cell) {
            double seconds = 0;
            for (const char* axis : {"entry_timeout", "attr_timeout"}) {
                std::string value = cell.param(axis);
                seconds = std::max(seconds, value.empty() ? 1.0 : std::stod(value));
            }
            return Coherence{Coherence::Promise::within, seconds};
        },
    .log_words = {"fuse:"},
    .functions = {"fuse_*"},
}};

} // namespace

} // namespace rig::core
