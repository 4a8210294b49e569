// SPDX-License-Identifier: MIT
// virtiofs: the C virtiofsd on the host, which the hypervisor starts per share.
#include "core/cell.hpp"
#include "core/fs.hpp"

namespace rig::core {

namespace {

const FsRegistrar k_virtiofs{{
    .name = "virtiofs",
    .listed = 1,
    // virtiofsd's -o cache= modes; /proc/mounts shows none of them.
    .caches = {{"auto", "", ""}, {"always", "", ""}, {"none", "", ""}},
    .default_cache = "auto",
    .axes = {},
    .share = ShareKind::virtiofs,
    .daemon = Daemon::host,
    .daemon_name = "virtiofsd",
    .daemon_options = {},
    .counter = Counter::virtiofsd_log,
    .mount = GuestMount::kernel,
    .fstype = "virtiofs",
    // Caching is virtiofsd's, set on the host: the mount takes no options.
    .mount_options = nullptr,
    .names_share = false,
    .marks_in_share = true,
    .shows_negotiated = false,
    .modules = {"virtiofs"},
    // virtiofsd's entry and attribute timeouts: 0 for none, 1 s for auto, a day for always.
    .coherence =
        [](const Cell& cell) {
            std::string cache = cache_or_default(cell);
            if (cache == "none")
                return Coherence{Coherence::Promise::immediate, 0};
            if (cache == "auto")
                return Coherence{Coherence::Promise::within, 1.0};
            return Coherence{};
        },
    .log_words = {"virtio-fs", "virtiofs", "virtio_fs"},
    // virtiofs is a FUSE transport: fs/fuse/virtio_fs.c over FUSE's core.
    .functions = {"virtio_fs_*", "fuse_*"},
}};

} // namespace

} // namespace rig::core
