// SPDX-License-Identifier: MIT
#include "run/share_mount.hpp"

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

bool g_private_mounts = false;

} // namespace

bool enter_private_mounts() {
    g_private_mounts = ::geteuid() == 0 && ::unshare(CLONE_NEWNS) == 0 &&
                       ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    return g_private_mounts;
}

Expected<std::unique_ptr<ShareMount>> ShareMount::mount(const fs::path& share, uint64_t cap) {
    std::error_code ec;
    fs::create_directories(share, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + share.string() + ": " + ec.message());
    if (!g_private_mounts || cap == 0)
        return std::unique_ptr<ShareMount>();
    // A tmpfs takes no time to make, and its pages only as the workload writes them.
    std::string options = "size=" + std::to_string(cap) + ",mode=0755";
    if (::mount("rig-share", share.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
        return fail(ErrorKind::infra, "cannot mount the share's tmpfs on " + share.string() + ": " +
                                          std::strerror(errno));
    return std::unique_ptr<ShareMount>(new ShareMount(share, cap));
}

ShareMount::~ShareMount() {
    ::umount2(m_share.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove(m_share, ec);
}

} // namespace rig::run
