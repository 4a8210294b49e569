// SPDX-License-Identifier: MIT
#include "util/file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/statvfs.h>
#include <unistd.h>

namespace rig::util {

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

Expected<void> write_file_atomically(const std::filesystem::path& path, std::string_view text,
                                     Sync sync) {
    std::filesystem::path temporary = path.string() + ".tmp." + std::to_string(::getpid());
    auto failed = [&](const char* what) {
        std::string message =
            "cannot " + std::string(what) + " " + temporary.string() + ": " + std::strerror(errno);
        ::unlink(temporary.c_str());
        return fail(ErrorKind::infra, message);
    };
    int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return failed("create");
    for (size_t done = 0; done < text.size();) {
        ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote < 0) {
            ::close(fd);
            return failed("write");
        }
        done += static_cast<size_t>(wrote);
    }
    // On shared storage the rename must not reach another node before the bytes do.
    if (sync == Sync::to_disk && ::fsync(fd) != 0) {
        ::close(fd);
        return failed("sync");
    }
    ::close(fd);
    if (::rename(temporary.c_str(), path.c_str()) != 0)
        return failed("rename");
    return {};
}

bool for_each_file_line(const std::filesystem::path& path,
                        const std::function<void(std::string_view)>& line) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;
    std::string text;
    while (std::getline(in, text))
        line(text);
    return true;
}

std::optional<uint64_t> available_bytes(const std::filesystem::path& path) {
    struct statvfs stats {};
    if (::statvfs(path.c_str(), &stats) != 0)
        return std::nullopt;
    return static_cast<uint64_t>(stats.f_bavail) * stats.f_frsize;
}

std::filesystem::path file_with_extension(const std::filesystem::path& folder,
                                          std::string_view extension) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
        if (entry.path().extension() == extension)
            return entry.path();
    return {};
}

} // namespace rig::util
