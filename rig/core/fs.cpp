// SPDX-License-Identifier: MIT
// The filesystem table and what is read from a row.
#include "core/fs.hpp"

#include "core/cell.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <deque>

namespace rig::core {

// Defined by the file the build generates from core/fs/ (rig/core/meson.build): calling
// it makes the linker keep that object, and with it the rows' registrars, which nothing
// else refers to.
void link_filesystem_rows();

namespace {

std::vector<const Filesystem*>& table() {
    static std::vector<const Filesystem*> k_rows;
    return k_rows;
}

// The rows themselves. A deque never moves what it holds, so the table's pointers (and
// the references it hands out) stay valid; its end frees them at exit.
std::deque<Filesystem>& storage() {
    static std::deque<Filesystem> k_storage;
    return k_storage;
}

} // namespace

FsRegistrar::FsRegistrar(Filesystem row) {
    assert(!find_fs(row.name));
    const Filesystem* kept = &storage().emplace_back(std::move(row));
    auto& rows = table();
    auto after = std::upper_bound(
        rows.begin(), rows.end(), kept,
        [](const Filesystem* a, const Filesystem* b) { return a->listed < b->listed; });
    rows.insert(after, kept);
}

const std::vector<const Filesystem*>& filesystems() {
    link_filesystem_rows();
    return table();
}

const Filesystem* find_fs(std::string_view name) {
    for (const Filesystem* fs : table())
        if (fs->name == name)
            return fs;
    return nullptr;
}

const Filesystem& default_fs() {
    link_filesystem_rows();
    const Filesystem* fs = find_fs(k_default_fs);
    assert(fs);
    return *fs;
}

const std::vector<std::string>& fs_names() {
    static const std::vector<std::string> k_names = [] {
        std::vector<std::string> names;
        for (const Filesystem* fs : filesystems())
            names.emplace_back(fs->name);
        return names;
    }();
    return k_names;
}

std::vector<std::string> valid_caches(const Filesystem& fs) {
    std::vector<std::string> names;
    for (const CacheMode& mode : fs.caches)
        names.emplace_back(mode.name);
    return names;
}

bool has_cache_axis(const Filesystem& fs) {
    return !fs.caches.empty();
}

bool is_valid_cache(const Filesystem& fs, std::string_view cache) {
    return std::any_of(fs.caches.begin(), fs.caches.end(),
                       [&](const CacheMode& mode) { return mode.name == cache; });
}

std::string cache_or_default(const Cell& cell) {
    std::string cache = cell.cache();
    return cache.empty() ? std::string(cell.fs().default_cache) : cache;
}

std::string_view to_string(Coherence::Promise promise) {
    switch (promise) {
    case Coherence::Promise::immediate:
        return "immediate";
    case Coherence::Promise::within:
        return "within";
    case Coherence::Promise::none:
        return "none";
    }
    return "?";
}

std::string describe(const Coherence& coherence) {
    if (coherence.promise != Coherence::Promise::within)
        return std::string(to_string(coherence.promise));
    return "within " + util::compact(coherence.seconds) + " s";
}

Coherence coherence(const Cell& cell) {
    const Filesystem& fs = cell.fs();
    return fs.coherence ? fs.coherence(cell) : Coherence{};
}

std::string work_mount_options(const Cell& cell) {
    const Filesystem& fs = cell.fs();
    return fs.mount_options ? fs.mount_options(cell) : std::string();
}

std::vector<std::string> daemon_arguments(const Cell& cell) {
    std::vector<std::string> args;
    for (const DaemonOption& option : cell.fs().daemon_options) {
        std::string value = cell.param(std::string(option.axis));
        if (value.empty() || (option.flag && value != "true"))
            continue;
        args.emplace_back(option.option);
        if (!option.flag)
            args.push_back(value);
    }
    return args;
}

std::string mount_requested(const Cell& cell) {
    const Filesystem& fs = cell.fs();
    if (fs.daemon == Daemon::none)
        return work_mount_options(cell);
    std::vector<std::string> words{std::string(fs.daemon_name)};
    if (has_cache_axis(fs))
        words.push_back("cache=" + cache_or_default(cell));
    for (std::string& arg : daemon_arguments(cell))
        words.push_back(std::move(arg));
    return util::join(words, " ");
}

Negotiated negotiated_options(const Filesystem& fs, std::string_view mount_options) {
    Negotiated out;
    if (!fs.shows_negotiated)
        return out;
    for (const CacheMode& mode : fs.caches)
        if (mode.word.empty())
            out.cache = mode.name;
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
            std::string_view value = option.substr(6);
            if (value.substr(0, 2) == "0x")
                value.remove_prefix(2);
            out.cache = std::string(option.substr(6));
            for (const CacheMode& mode : fs.caches)
                if (!mode.mask.empty() && value == mode.mask)
                    out.cache = mode.name;
        } else {
            for (const CacheMode& mode : fs.caches)
                if (!mode.word.empty() && option == mode.word)
                    out.cache = mode.name;
        }
    }
    return out;
}

} // namespace rig::core
