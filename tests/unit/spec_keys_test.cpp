// SPDX-License-Identifier: MIT
// Every key the scenario reader accepts is documented: in its section of
// scenarios/README.md, and so in rig-scenario(5), the man page made from it.
#include "spec/keys.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <string>

namespace rig::spec {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// A markdown file's "## " sections by heading.
std::map<std::string, std::string> markdown_sections(const std::string& text) {
    std::map<std::string, std::string> sections;
    std::string heading;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("## ", 0) == 0)
            heading = line.substr(3);
        else
            sections[heading] += line + "\n";
    }
    return sections;
}

// A man page's text with roff's font changes and escapes taken out, by .SH section.
std::map<std::string, std::string> man_sections(const std::string& roff) {
    std::map<std::string, std::string> sections;
    std::string heading;
    std::istringstream in(roff);
    bool next_is_heading = false;
    for (std::string line; std::getline(in, line);) {
        for (const char* escape : {"\\fB", "\\fR", "\\fI", "\\fP", "\\&"})
            for (size_t at; (at = line.find(escape)) != std::string::npos;)
                line.erase(at, std::string(escape).size());
        for (size_t at; (at = line.find("\\-")) != std::string::npos;)
            line.erase(at, 1);
        if (next_is_heading) {
            heading = line;
            next_is_heading = false;
        } else if (line == ".SH") {
            next_is_heading = true;
        } else {
            sections[heading] += line + "\n";
        }
    }
    return sections;
}

// "`guest`" is the man page's "GUEST".
std::string man_heading(std::string heading) {
    std::string plain;
    for (char c : heading)
        if (c != '`')
            plain += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return plain;
}

TEST(spec_keys, every_key_is_in_its_section_of_scenarios_readme) {
    const char* root = std::getenv("RIG_SOURCE_ROOT");
    ASSERT_NE(root, nullptr) << "RIG_SOURCE_ROOT is not set";
    auto sections = markdown_sections(read_text(fs::path(root) / "scenarios" / "README.md"));
    size_t keys = 0;
    for (const KeyGroup& group : key_groups()) {
        ASSERT_TRUE(sections.count(group.section)) << "no section ## " << group.section;
        for (const std::string& key : group.keys) {
            EXPECT_NE(sections[group.section].find("`" + key + "`"), std::string::npos)
                << "key " << key << " is not documented under ## " << group.section;
            ++keys;
        }
    }
    EXPECT_GE(keys, 60u);
}

TEST(spec_keys, every_key_is_in_its_section_of_the_man_page) {
    const char* page = std::getenv("RIG_MAN_SCENARIO");
    ASSERT_NE(page, nullptr) << "RIG_MAN_SCENARIO is not set";
    ASSERT_TRUE(fs::exists(page)) << page;
    auto sections = man_sections(read_text(page));
    for (const KeyGroup& group : key_groups()) {
        std::string heading = man_heading(group.section);
        ASSERT_TRUE(sections.count(heading)) << "no section .SH " << heading << " in " << page;
        for (const std::string& key : group.keys)
            EXPECT_NE(sections[heading].find(key), std::string::npos)
                << "key " << key << " is not in section " << heading << " of " << page;
    }
}

} // namespace
} // namespace rig::spec
