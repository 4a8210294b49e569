// SPDX-License-Identifier: MIT
// File descriptors for children's stdio: owned, close-on-exec and never 0, 1 or 2.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <unistd.h>
#include <utility>

namespace rig::proc {

// strerror's text for `error`, safe from any thread.
std::string errno_message(int error);

// Owns one descriptor and closes it when destroyed.
class Fd final {
public:
    Fd() = default;
    explicit Fd(int fd) : m_fd(fd) {}
    Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            m_fd = std::exchange(other.m_fd, -1);
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }

    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }
    void reset() {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
    }

private:
    int m_fd = -1;
};

// The child dup2()s these onto 0, 1 and 2; a source below 3 could be overwritten by an
// earlier dup2 (rig started with a closed stdio fd), so `fd` is moved out of the way.
Expected<Fd> above_stdio(Fd fd);

// Opened with O_CLOEXEC, like every descriptor here: another thread may fork a child
// concurrently, and an inherited write end of our pipe would keep it from reaching EOF.
Expected<Fd> open_fd(const std::filesystem::path& path, int flags);

struct Pipe {
    Fd read;
    Fd write;
};

// Both ends blocking and close-on-exec.
Expected<Pipe> blocking_pipe();

// A pipe whose read end, ours, does not block; the child's writes still do.
Expected<Pipe> make_pipe();

} // namespace rig::proc
