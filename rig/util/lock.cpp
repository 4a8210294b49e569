// SPDX-License-Identifier: MIT
#include "util/lock.hpp"

#include "util/file.hpp"
#include "util/strings.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

namespace {

// A whole number in `base`, and nothing else.
template <typename T> std::optional<T> number(std::string_view text, int base = 10) {
    T value{};
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

} // namespace

std::optional<int> find_write_lock(std::string_view locks, unsigned major, unsigned minor,
                                   uint64_t inode, uint64_t byte, int self) {
    std::optional<int> holder;
    for_each_line(locks, [&](std::string_view line) {
        // "1: POSIX  ADVISORY  WRITE 9658 fe:00:10986134 0 EOF"
        std::vector<std::string> words;
        for (const std::string& word : split(line, ' '))
            if (!word.empty())
                words.push_back(word);
        if (holder || words.size() != 8 || words[1] != "POSIX" || words[3] != "WRITE")
            return;
        auto pid = number<int>(words[4]);
        std::vector<std::string> id = split(words[5], ':');
        if (!pid || *pid == self || id.size() != 3 || number<unsigned>(id[0], 16) != major ||
            number<unsigned>(id[1], 16) != minor || number<uint64_t>(id[2]) != inode)
            return;
        auto start = number<uint64_t>(words[6]);
        auto end =
            words[7] == "EOF" ? std::optional<uint64_t>(UINT64_MAX) : number<uint64_t>(words[7]);
        if (start && end && *start <= byte && byte <= *end)
            holder = *pid;
    });
    return holder;
}

std::optional<LockHolder> write_lock_holder(const std::filesystem::path& file, uint64_t byte) {
    struct stat info {};
    if (::stat(file.c_str(), &info) != 0)
        return std::nullopt;
    auto pid = find_write_lock(read_file("/proc/locks"), ::major(info.st_dev), ::minor(info.st_dev),
                               info.st_ino, byte, ::getpid());
    if (!pid)
        return std::nullopt;
    std::string name(trim(read_file("/proc/" + std::to_string(*pid) + "/comm")));
    return LockHolder{*pid, name};
}

} // namespace rig::util
