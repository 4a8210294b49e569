// SPDX-License-Identifier: MIT
// An exclusive flock on a file, held for the lifetime of the object. The kernel drops it
// when the process dies, so a killed rig never leaves a stale lock behind.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <functional>
#include <optional>

namespace rig::util {

class FileLock final {
public:
    // Blocks until the lock is held; `waiting` runs once if another holder made us wait.
    static Expected<FileLock> acquire(const std::filesystem::path& path,
                                      const std::function<void()>& waiting = {});
    // The lock if it is free now, nothing if another process holds it.
    static Expected<std::optional<FileLock>> try_acquire(const std::filesystem::path& path);

    FileLock(FileLock&& other) noexcept;
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    FileLock& operator=(FileLock&&) = delete;
    ~FileLock();

private:
    explicit FileLock(int fd) : m_fd(fd) {}
    int m_fd;
};

} // namespace rig::util
