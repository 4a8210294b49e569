// SPDX-License-Identifier: MIT
// A path's class, what per-path request counts are kept by. Header only, with nothing but
// the standard library: rig-fuse, which links no rig library, counts its requests by it in
// the guest, and the host's reader of virtiofsd's log by the same rule.
#pragma once

#include <string>
#include <string_view>

namespace rig::core {

// A class is at most this long; a deeper one keeps its end, after "...".
inline constexpr size_t k_max_path_class = 96;

// How many classes per request type a window reports: those that counted most, ties by
// name, so that a tree of many folders gives a bounded, repeatable set of metrics.
inline constexpr size_t k_path_classes_per_request = 5;

// The class of the share's root, and where a name's parent is unknown.
inline constexpr std::string_view k_root_class = "/";
inline constexpr std::string_view k_unknown_class = "?";

// Only [A-Za-z0-9_.,+=:-] of a name stay, anything else becomes '_': classes become metric
// names, and nothing the workload names is trusted.
inline std::string clean_path_name(std::string_view name) {
    std::string out(name);
    for (char& c : out)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == ',' || c == '+' || c == '=' || c == ':' || c == '-'))
            c = '_';
    return out;
}

// The class of `name` in the directory of class `dir` ("/" for the root, "include/"): a
// directory is itself ("include/"), a file its directory and extension as make's patterns
// write them ("include/%.h"; "%" alone without an extension of 1 to 8 characters), so that
// the thousand headers of one folder are one line.
inline std::string path_class(std::string_view dir, std::string_view name, bool is_dir) {
    std::string prefix = dir == k_root_class ? std::string() : std::string(dir);
    std::string cleaned = clean_path_name(name);
    std::string out;
    if (is_dir) {
        out = prefix + cleaned + "/";
    } else {
        size_t dot = cleaned.rfind('.');
        size_t length = dot == std::string::npos ? 0 : cleaned.size() - dot - 1;
        bool extension = dot != std::string::npos && dot > 0 && length >= 1 && length <= 8;
        out = prefix + (extension ? "%" + cleaned.substr(dot) : std::string("%"));
    }
    if (out.size() > k_max_path_class)
        out = "..." + out.substr(out.size() - (k_max_path_class - 3));
    return out;
}

} // namespace rig::core
