// SPDX-License-Identifier: MIT
// File following with a kept descriptor, so a rotated or truncated file is not re-read.
#include "util/follow.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace rig::util {

FileFollower::~FileFollower() {
    if (m_fd >= 0)
        ::close(m_fd);
}

std::string FileFollower::read_new(size_t limit) {
    if (m_fd < 0) {
        m_fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_fd < 0)
            return {};
    }
    std::string out;
    char buffer[65536];
    while (out.size() < limit) {
        size_t want = std::min(sizeof buffer, limit - out.size());
        ssize_t got = ::pread(m_fd, buffer, want, static_cast<off_t>(m_offset));
        if (got <= 0)
            break;
        out.append(buffer, static_cast<size_t>(got));
        m_offset += static_cast<size_t>(got);
    }
    return out;
}

} // namespace rig::util
