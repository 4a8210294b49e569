// SPDX-License-Identifier: MIT
// Guest function profiles: set names and the globs they stand for.
#include "core/profile.hpp"

#include "core/fs.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace rig::core {

namespace {

// The layers beneath the filesystems' clients, which no row of the table owns: 9p and
// others moved onto netfs between 6.1 and 6.12, and fscache caches for both.
constexpr std::array<std::pair<std::string_view, std::array<std::string_view, 2>>, 2> k_layers{{
    {"netfs", {"netfs_*", ""}},
    {"fscache", {"fscache_*", "__fscache_*"}},
}};

bool glob_character(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '*' || c == '?';
}

} // namespace

std::vector<std::string> profile_set_names() {
    std::vector<std::string> names;
    for (const Filesystem* fs : filesystems())
        if (!fs->functions.empty())
            names.emplace_back(fs->name);
    for (const auto& [name, globs] : k_layers)
        names.emplace_back(name);
    return names;
}

std::string profile_entry_error(std::string_view entry) {
    const auto names = profile_set_names();
    if (std::find(names.begin(), names.end(), entry) != names.end())
        return "";
    if (entry.empty() || !std::all_of(entry.begin(), entry.end(), glob_character))
        return "expected a function glob of letters, digits, _ * and ?";
    if (std::min(entry.find('*'), entry.find('?')) < 3)
        return "a glob needs three characters before its first wildcard";
    return "";
}

std::vector<std::string> profile_globs(const std::vector<std::string>& profile) {
    std::vector<std::string> globs;
    auto add = [&globs](std::string_view glob) {
        if (!glob.empty() && std::find(globs.begin(), globs.end(), glob) == globs.end())
            globs.emplace_back(glob);
    };
    for (const std::string& entry : profile) {
        if (const Filesystem* fs = find_fs(entry); fs && !fs->functions.empty()) {
            for (std::string_view glob : fs->functions)
                add(glob);
            continue;
        }
        auto layer = std::find_if(k_layers.begin(), k_layers.end(),
                                  [&entry](const auto& row) { return row.first == entry; });
        if (layer != k_layers.end()) {
            for (std::string_view glob : layer->second)
                add(glob);
            continue;
        }
        add(entry);
    }
    return globs;
}

} // namespace rig::core
