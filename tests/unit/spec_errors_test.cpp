// SPDX-License-Identifier: MIT
// Unit tests of rig::spec on malformed scenarios: each must fail with its located message.
#include "spec/spec.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace rig::spec {
namespace {

namespace fs = std::filesystem;

fs::path data_dir() {
    const char* dir = std::getenv("RIG_TEST_DATA");
    return dir ? fs::path(dir) : fs::path("tests/data");
}

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string error_of(const std::string& text, const std::string& label = "test.yaml") {
    auto scenario = parse_scenario(text, label);
    if (scenario)
        return "(parsed without error)";
    EXPECT_EQ(scenario.error().kind, ErrorKind::config);
    return scenario.error().message;
}

const std::string k_head = "name: t\n"
                           "kernels:\n"
                           "  - {name: deb-6.1, debian: linux-image-6.1.0-57-amd64}\n";

// Each file in bad/ starts with "# expect: SUBSTRING"; it is parsed under its bare file
// name, so the substring can name FILE:LINE:COL and the key path.
TEST(spec_errors, every_bad_file_fails_with_its_expected_message) {
    fs::path dir = data_dir() / "bad";
    ASSERT_TRUE(fs::is_directory(dir)) << dir << " (set RIG_TEST_DATA)";
    size_t count = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".yaml")
            continue;
        ++count;
        std::string name = entry.path().filename().string();
        std::string text = read_text(entry.path());
        const std::string k_marker = "# expect: ";
        ASSERT_EQ(text.rfind(k_marker, 0), 0u) << name << " lacks its '# expect: ' line";
        std::string expected = text.substr(k_marker.size(), text.find('\n') - k_marker.size());
        ASSERT_FALSE(expected.empty()) << name;
        std::string message = error_of(text, name);
        EXPECT_NE(message.find(expected), std::string::npos)
            << name << "\n  expected: " << expected << "\n  got:      " << message;
    }
    EXPECT_GE(count, 30u);
}

TEST(spec_errors, unreadable_file) {
    auto missing = load_scenario("/nonexistent/rig/scenario.yaml");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().kind, ErrorKind::config);
    EXPECT_EQ(missing.error().message,
              "/nonexistent/rig/scenario.yaml: cannot read: No such file or directory");

    auto directory = load_scenario(data_dir());
    ASSERT_FALSE(directory);
    EXPECT_EQ(directory.error().message, data_dir().string() + ": cannot read: Is a directory");
}

TEST(spec_errors, load_uses_the_path_as_label) {
    auto scenario = load_scenario(data_dir() / "bad" / "unknown-key.yaml");
    ASSERT_FALSE(scenario);
    EXPECT_EQ(scenario.error().message.rfind(
                  (data_dir() / "bad" / "unknown-key.yaml").string() + ":5:3: matrix.chache: ", 0),
              0u)
        << scenario.error().message;
}

TEST(spec_errors, nul_byte) {
    EXPECT_EQ(error_of(std::string("name: a\nkernels: \0x", 19)),
              "test.yaml:2:10: contains a NUL byte; is this a YAML text file?");
}

TEST(spec_errors, deep_nesting_is_an_error_not_a_crash) {
    for (size_t depth : {100u, 5000u, 200000u}) {
        EXPECT_NE(error_of(std::string(depth, '[')).find("test.yaml:"), std::string::npos);
        EXPECT_NE(error_of("name: " + std::string(depth, '{')).find("test.yaml:"),
                  std::string::npos);
        std::string block;
        for (size_t i = 0; i < depth; ++i)
            block += "- ";
        EXPECT_NE(error_of(block + "x").find("test.yaml:"), std::string::npos);
    }
    EXPECT_NE(error_of(std::string(100000, '[')).find("nesting too deep"), std::string::npos);
}

TEST(spec_errors, self_referencing_alias_does_not_hang) {
    EXPECT_EQ(error_of(k_head + "matrix: {fs: &a [9p, *a]}\n"),
              "test.yaml:4:14: matrix.fs[1]: expected a string, got a list");
    EXPECT_EQ(error_of(k_head + "exclude: &r [*r]\n"),
              "test.yaml:4:10: exclude[0]: expected a map, got a list");
}

TEST(spec_errors, aliases_count_as_duplicates) {
    EXPECT_EQ(error_of(k_head + "matrix: {cache: [&c none, *c]}\n"),
              "test.yaml:4:18: matrix.cache[1]: duplicate value 'none'; already listed at line 4");
}

// yaml-cpp 0.7's LoadAll never returns on these; parse must.
TEST(spec_errors, stray_text_after_the_document) {
    EXPECT_EQ(error_of(", "), "test.yaml:1:1: unexpected text after the end of the YAML document");
    EXPECT_EQ(error_of("[a], b\n"),
              "test.yaml:1:4: unexpected text after the end of the YAML document");
    EXPECT_EQ(error_of(k_head + "...\n---\nname: b\n"),
              "test.yaml:5:1: a scenario file holds one YAML document; remove the second one");
}

TEST(spec_errors, matrix_too_large) {
    std::string text = "name: t\nkernels:\n";
    for (int k = 0; k < 60; ++k)
        text += "  - {name: k" + std::to_string(k) + ", debian: linux-image-6.1.0-57-amd64}\n";
    text += "matrix:\n  fs: 9p\n  msize: [";
    for (int m = 0; m < 40; ++m)
        text += (m ? ", " : "") + std::to_string(4096 + m);
    text += "]\n  cache: [none, loose, mmap, fscache, readahead]\n";
    EXPECT_EQ(error_of(text), "test.yaml:64:3: matrix: more than 10000 cells; split the matrix "
                              "into several scenarios");
}

// yaml-cpp says "illegal map value", past the tab; rig names the tab where it is.
TEST(spec_errors, a_tab_in_indentation_is_named_as_such) {
    EXPECT_EQ(error_of("name: t\n\tkernels: []\n"),
              "test.yaml:2:1: a tab in indentation (YAML indents with spaces)");
    EXPECT_EQ(error_of(k_head + "matrix:\n  fs: 9p\n  \tcache: none\n"),
              "test.yaml:6:3: a tab in indentation (YAML indents with spaces)");
    EXPECT_EQ(error_of(k_head + "workload:\n\t  command: make\n"),
              "test.yaml:5:1: a tab in indentation (YAML indents with spaces)");
}

// Where YAML allows a tab at a line's start, rig does too: inside a block scalar's text, a
// flow collection or a quoted scalar that spans lines, and on a blank or comment line.
TEST(spec_errors, tabs_that_yaml_allows_stay_allowed) {
    for (std::string text : {k_head + "workload:\n  command: |\n    make\n    \tmake -j2\n",
                             k_head + "matrix: {cache: [none,\n\tloose]}\n",
                             k_head + "workload: {command: \"make\n\t-j2\"}\n",
                             k_head + "\t\n\t# a comment\nrepeat: 2\n"}) {
        auto scenario = parse_scenario(text, "test.yaml");
        EXPECT_TRUE(scenario) << text << "\n" << scenario.error().message;
    }
}

TEST(spec_errors, nothing_throws_on_odd_inputs) {
    for (std::string text : {"",
                             "\n",
                             "---\n",
                             "...",
                             "~",
                             "[]",
                             "{}",
                             "name",
                             "- a",
                             "!!binary x",
                             "&a *a",
                             "name: t\nkernels: [*x]\n",
                             "? a\n",
                             ": x\n",
                             "name: t\n\tkernels: []\n",
                             "%YAML 1.2\n",
                             "%YAML 9.9\n---\na: b",
                             "\xef\xbb\xbfname: t",
                             "\xff\xfe\x00",
                             "'",
                             "\"\\x\"",
                             "a: !<tag:x> b",
                             "kernels: [{name: a, debian: b}]\nname: t\ninclude: [{kernel: *q}]"}) {
        auto scenario = parse_scenario(text, "odd.yaml");
        EXPECT_FALSE(scenario) << text;
    }
}

} // namespace
} // namespace rig::spec
