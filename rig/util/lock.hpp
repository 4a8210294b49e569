// SPDX-License-Identifier: MIT
// An exclusive flock on a file, held for the lifetime of the object. The kernel drops it
// when the process dies, so a killed rig never leaves a stale lock behind. And who holds
// another process's POSIX lock on a file, for a message that says what rig waits for.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rig::util {

class FileLock final {
public:
    // Blocks until the lock is held; `waiting` runs once if another holder made us wait.
    static Expected<FileLock> acquire(const std::filesystem::path& path,
                                      const std::function<void()>& waiting = {});
    // The lock if it is free now, nothing if another process holds it.
    static Expected<std::optional<FileLock>> try_acquire(const std::filesystem::path& path);
    // The same, for a file that readers probe (lock_state): one that does not exist yet is
    // made already locked (a temporary file locked, then linked into place), so that no
    // reader ever finds it free while its owner lives.
    static Expected<std::optional<FileLock>> try_own(const std::filesystem::path& path);

    FileLock(FileLock&& other) noexcept;
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    FileLock& operator=(FileLock&&) = delete;
    ~FileLock();

private:
    explicit FileLock(int fd) : m_fd(fd) {}
    int m_fd;
};

// Whether someone holds a FileLock on `path`, asked without taking it for more than the
// asking and without writing anything: a reader's question (is the rig that owns this
// still alive?). `unknown` when the file cannot be read or locked at all.
enum class LockState { held, free, absent, unknown };
LockState lock_state(const std::filesystem::path& path);

// Another process holding a write lock on a byte range of a file.
struct LockHolder {
    int pid = 0;
    std::string name; // its /proc/PID/comm, "" when it is gone
};

// The process other than this one that holds a POSIX write lock covering `byte` of
// `file`, read from /proc/locks. Asking with fcntl(F_GETLK) would need a descriptor of
// the file, and closing one drops every POSIX lock this process holds on it (SQLite's).
std::optional<LockHolder> write_lock_holder(const std::filesystem::path& file, uint64_t byte);

// The parse behind write_lock_holder: the pid of the first POSIX write lock in `locks`
// (/proc/locks' text) on device `major`:`minor`, inode `inode`, that covers `byte` and is
// not held by `self`. Waiters ("->" lines) hold nothing.
std::optional<int> find_write_lock(std::string_view locks, unsigned major, unsigned minor,
                                   uint64_t inode, uint64_t byte, int self);

} // namespace rig::util
