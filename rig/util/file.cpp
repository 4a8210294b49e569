// SPDX-License-Identifier: MIT
#include "util/file.hpp"

#include <fstream>
#include <sstream>
#include <sys/statvfs.h>

namespace rig::util {

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
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

} // namespace rig::util
