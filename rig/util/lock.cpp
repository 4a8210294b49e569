// SPDX-License-Identifier: MIT
#include "util/lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <utility>

namespace rig::util {

namespace {

Expected<int> open_lock_file(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(ErrorKind::infra, "cannot open " + path.string() + ": " + std::strerror(errno));
    return fd;
}

} // namespace

Expected<FileLock> FileLock::acquire(const std::filesystem::path& path,
                                     const std::function<void()>& waiting) {
    int fd = RIG_TRY(open_lock_file(path));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (waiting)
            waiting();
        while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    return FileLock(fd);
}

Expected<std::optional<FileLock>> FileLock::try_acquire(const std::filesystem::path& path) {
    int fd = RIG_TRY(open_lock_file(path));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return std::optional<FileLock>();
    }
    return std::optional<FileLock>(FileLock(fd));
}

FileLock::FileLock(FileLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

FileLock::~FileLock() {
    if (m_fd >= 0)
        ::close(m_fd); // releases the lock
}

} // namespace rig::util
