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

Expected<std::optional<FileLock>> FileLock::try_own(const std::filesystem::path& path) {
    for (;;) {
        int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            // A reader's probe (lock_state) holds it for a moment: ask a few times.
            for (int attempt = 0; attempt < 5; ++attempt) {
                if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
                    return std::optional<FileLock>(FileLock(fd));
                ::usleep(10000);
            }
            ::close(fd);
            return std::optional<FileLock>();
        }
        if (errno != ENOENT)
            return fail(ErrorKind::infra,
                        "cannot open " + path.string() + ": " + std::strerror(errno));
        std::filesystem::path made = path.string() + "." + std::to_string(::getpid()) + ".new";
        int fresh = RIG_TRY(open_lock_file(made));
        ::flock(fresh, LOCK_EX | LOCK_NB); // nobody else knows the file yet
        // link, not rename: another owner that made the file meanwhile keeps it.
        int linked = ::link(made.c_str(), path.c_str());
        int link_error = errno;
        ::unlink(made.c_str());
        if (linked == 0)
            return std::optional<FileLock>(FileLock(fresh));
        ::close(fresh);
        if (link_error != EEXIST)
            return fail(ErrorKind::infra,
                        "cannot create " + path.string() + ": " + std::strerror(link_error));
    }
}

LockState lock_state(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? LockState::absent : LockState::unknown;
    // Shared: two readers asking at once do not see each other as the owner.
    LockState state = LockState::free;
    if (::flock(fd, LOCK_SH | LOCK_NB) != 0)
        state = errno == EWOULDBLOCK ? LockState::held : LockState::unknown;
    ::close(fd);
    return state;
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
