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

} // namespace rig::util
