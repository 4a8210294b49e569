// SPDX-License-Identifier: MIT
// A sample's work share on a filesystem of its own, so that a workload cannot fill the
// host's disk: a tmpfs of the scenario's guest.share_limit, mounted when rig is root.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>

namespace rig::run {

// Moves rig into a mount namespace of its own (private, so nothing propagates to the
// host's), where the share mounts it makes vanish with it and its children, even after
// kill -9. First thing in main, before any thread: it moves the calling thread alone.
// False where it cannot (not root, or no CAP_SYS_ADMIN): shares are then not capped.
bool enter_private_mounts();

class ShareMount final {
public:
    // `share` made and a tmpfs of `cap` bytes mounted on it; nullptr (nothing mounted,
    // the share an ordinary folder) without a private mount namespace or with cap 0.
    static Expected<std::unique_ptr<ShareMount>> mount(const std::filesystem::path& share,
                                                       uint64_t cap);
    // Unmounted (lazily, should QEMU still hold it) with what it holds.
    ~ShareMount();
    ShareMount(const ShareMount&) = delete;
    ShareMount& operator=(const ShareMount&) = delete;

    uint64_t cap() const { return m_cap; }

private:
    ShareMount(std::filesystem::path share, uint64_t cap) : m_share(std::move(share)), m_cap(cap) {}
    std::filesystem::path m_share;
    uint64_t m_cap;
};

// Below this much room, a capped share counts as full: the workload's writes fail.
inline constexpr uint64_t k_share_full_bytes = 64 << 10;

} // namespace rig::run
