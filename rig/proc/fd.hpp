// SPDX-License-Identifier: MIT
// File descriptors for children's stdio: owned, close-on-exec and never 0, 1 or 2.
#pragma once

#include "util/error.hpp"
#include "util/fd.hpp"

#include <filesystem>
#include <string>

namespace rig::proc {

// strerror's text for `error`, safe from any thread.
std::string errno_message(int error);

using Fd = util::Fd;

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
