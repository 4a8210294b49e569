// SPDX-License-Identifier: MIT
// 9p: QEMU's own file server over virtio, mounted by the guest kernel.
#include "core/cell.hpp"
#include "core/fs.hpp"

namespace rig::core {

namespace {

const FsRegistrar k_ninep{{
    .name = "9p",
    .listed = 0,
    // The kernel's cache= names; the pre-6.4 names stay accepted after the bitmask change.
    .caches = {{"none", "", "0"},
               {"loose", "loose", "f"},
               {"fscache", "fscache", "8f"},
               {"mmap", "mmap", "5"},
               {"readahead", "readahead", "1"},
               {"writeback", "writeback", ""}},
    .default_cache = "",
    .axes = {"msize"},
    .share = ShareKind::v9p,
    .daemon = Daemon::none,
    .daemon_name = "",
    .daemon_options = {},
    .counter = Counter::ninep_trace,
    .mount = GuestMount::kernel,
    .fstype = "9p",
    // Exactly the cell's msize and cache, nothing implied.
    .mount_options =
        [](const Cell& cell) {
            std::string options = "trans=virtio,version=9p2000.L";
            if (auto msize = cell.msize())
                options += ",msize=" + std::to_string(*msize);
            if (!cell.cache().empty())
                options += ",cache=" + cell.cache();
            return options;
        },
    .names_share = true,
    .marks_in_share = false,
    .shows_negotiated = true,
    // The root share is 9p already: every guest loads 9p.
    .modules = {},
    // Without a cache (the kernel's default) or with only mmap's, every read asks the
    // server; every other mode keeps what it read as long as it likes.
    .coherence =
        [](const Cell& cell) {
            std::string cache = cell.cache();
            if (cache.empty() || cache == "none" || cache == "mmap")
                return Coherence{Coherence::Promise::immediate, 0};
            return Coherence{};
        },
    .log_words = {"9pnet", "9p:", "v9fs", "netfs", "fscache", "FS-Cache"},
    // fs/9p and net/9p.
    .functions = {"v9fs_*", "p9_*"},
}};

} // namespace

} // namespace rig::core
