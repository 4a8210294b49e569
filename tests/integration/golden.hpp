// SPDX-License-Identifier: MIT
// Golden-file comparison for integration tests; RIG_ACCEPT_GOLDEN=1 rewrites the files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace rig::test {

inline std::filesystem::path source_root() {
    const char* root = std::getenv("RIG_SOURCE_ROOT");
    return root ? root : ".";
}

inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// How often `part` occurs in `text`, overlaps counted.
inline size_t count_of(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++n;
    return n;
}

inline void expect_golden(const std::string& actual, const std::string& name) {
    auto path = source_root() / "tests/data/golden" / name;
    const char* accept = std::getenv("RIG_ACCEPT_GOLDEN");
    if (accept && std::string(accept) == "1") {
        // In CI an accepted file would turn every golden check into a write that passes.
        const char* ci = std::getenv("CI");
        ASSERT_FALSE(ci && *ci && std::string(ci) != "false")
            << "RIG_ACCEPT_GOLDEN=1 is refused when CI is set: accept golden files locally";
        std::ofstream(path, std::ios::binary) << actual;
        return;
    }
    ASSERT_TRUE(std::filesystem::exists(path))
        << path << " is missing; run the test with RIG_ACCEPT_GOLDEN=1 to create it";
    EXPECT_EQ(actual, read_text(path))
        << "golden " << name << " differs; RIG_ACCEPT_GOLDEN=1 re-accepts it";
}

} // namespace rig::test
