// SPDX-License-Identifier: MIT
#include "util/file.hpp"

#include <fstream>
#include <sstream>

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

} // namespace rig::util
