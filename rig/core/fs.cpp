// SPDX-License-Identifier: MIT
// Shared filesystems and their cache modes.
#include "core/fs.hpp"

#include <algorithm>
#include <charconv>

namespace rig::core {

std::string_view to_string(Fs fs) {
    switch (fs) {
    case Fs::v9p:
        return "9p";
    case Fs::virtiofs:
        return "virtiofs";
    case Fs::fuse:
        return "fuse";
    }
    return "?";
}

std::optional<Fs> parse_fs(std::string_view text) {
    if (text == "9p")
        return Fs::v9p;
    if (text == "virtiofs")
        return Fs::virtiofs;
    if (text == "fuse")
        return Fs::fuse;
    return std::nullopt;
}

const std::vector<std::string>& fs_names() {
    static const std::vector<std::string> k_names{"9p", "virtiofs", "fuse"};
    return k_names;
}

const std::vector<std::string>& valid_caches(Fs fs) {
    static const std::vector<std::string> k_9p{"none", "loose",     "fscache",
                                               "mmap", "readahead", "writeback"};
    static const std::vector<std::string> k_virtiofs{"auto", "always", "none"};
    static const std::vector<std::string> k_fuse;
    switch (fs) {
    case Fs::v9p:
        return k_9p;
    case Fs::virtiofs:
        return k_virtiofs;
    case Fs::fuse:
        break;
    }
    return k_fuse;
}

bool has_cache_axis(Fs fs) {
    return fs != Fs::fuse;
}

bool is_valid_cache(Fs fs, std::string_view cache) {
    const auto& valid = valid_caches(fs);
    return std::find(valid.begin(), valid.end(), cache) != valid.end();
}

Negotiated negotiated_options(Fs fs, std::string_view mount_options) {
    Negotiated out;
    if (fs != Fs::v9p)
        return out;
    out.cache = "none";
    size_t start = 0;
    while (start <= mount_options.size()) {
        size_t end = mount_options.find(',', start);
        if (end == std::string_view::npos)
            end = mount_options.size();
        std::string_view option = mount_options.substr(start, end - start);
        start = end + 1;
        if (option.substr(0, 6) == "msize=") {
            // A guest's /proc/mounts may be garbage: a number past 64 bits is none, not
            // the value it would wrap to.
            uint64_t value = 0;
            std::string_view digits = option.substr(6);
            auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
            if (ec == std::errc() && end == digits.data() + digits.size())
                out.msize = value;
        } else if (option.substr(0, 6) == "cache=") {
            // Names of the 6.4+ bit masks (fs/9p/v9fs.h).
            static const std::pair<std::string_view, std::string_view> k_masks[] = {
                {"0", "none"},
                {"1", "readahead"},
                {"5", "mmap"},
                {"f", "loose"},
                {"8f", "fscache"}};
            std::string_view value = option.substr(6);
            if (value.substr(0, 2) == "0x")
                value.remove_prefix(2);
            out.cache = std::string(option.substr(6));
            for (const auto& [mask, name] : k_masks)
                if (value == mask)
                    out.cache = name;
        } else if (option == "loose" || option == "fscache" || option == "mmap" ||
                   option == "readahead" || option == "writeback") {
            out.cache = std::string(option);
        }
    }
    return out;
}

} // namespace rig::core
