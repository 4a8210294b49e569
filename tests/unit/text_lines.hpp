// SPDX-License-Identifier: MIT
// The lines of a test's output, for comparing rendered text line by line.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace rig::test {

inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

} // namespace rig::test
