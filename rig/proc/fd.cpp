// SPDX-License-Identifier: MIT
// Close-on-exec descriptors and pipes for children's stdio.
#include "proc/fd.hpp"

#include <cerrno>
#include <fcntl.h>
#include <system_error>

namespace rig::proc {

std::string errno_message(int error) {
    return std::system_category().message(error);
}

Expected<Fd> above_stdio(Fd fd) {
    if (fd.get() >= 3)
        return fd;
    int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0)
        return fail(ErrorKind::infra, "fcntl(F_DUPFD_CLOEXEC): " + errno_message(errno));
    return Fd(moved);
}

Expected<Fd> open_fd(const std::filesystem::path& path, int flags) {
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(ErrorKind::infra, "cannot open " + path.string() + ": " + errno_message(errno));
    return above_stdio(Fd(fd));
}

Expected<Pipe> blocking_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return fail(ErrorKind::infra, "pipe2: " + errno_message(errno));
    Pipe pipe{Fd(fds[0]), Fd(fds[1])};
    pipe.read = RIG_TRY(above_stdio(std::move(pipe.read)));
    pipe.write = RIG_TRY(above_stdio(std::move(pipe.write)));
    return pipe;
}

Expected<Pipe> make_pipe() {
    Pipe pipe = RIG_TRY(blocking_pipe());
    // Only our end is non-blocking; the child's writes must block when the pipe is full.
    int flags = ::fcntl(pipe.read.get(), F_GETFL);
    if (flags < 0 || ::fcntl(pipe.read.get(), F_SETFL, flags | O_NONBLOCK) < 0)
        return fail(ErrorKind::infra, "fcntl(O_NONBLOCK): " + errno_message(errno));
    return pipe;
}

} // namespace rig::proc
