// SPDX-License-Identifier: MIT
// Shared filesystems a cell can mount, and the cache modes each of them knows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

// fuse: rig's own passthrough daemon (rig-fuse) inside the guest over a local copy of
// the work share; its kernel caching is set by the fuse knob axes, not by `cache`.
enum class Fs { v9p, virtiofs, fuse };

std::string_view to_string(Fs fs);
std::optional<Fs> parse_fs(std::string_view text);
const std::vector<std::string>& fs_names();

// 9p: the kernel's cache= names (pre-6.4 names stay accepted after the bitmask change).
// virtiofs: the C virtiofsd's -o cache= modes. fuse: none (no cache axis).
const std::vector<std::string>& valid_caches(Fs fs);
// Whether the `cache` axis means anything for fs.
bool has_cache_axis(Fs fs);
bool is_valid_cache(Fs fs, std::string_view cache);

// What /proc/mounts says a mount really got. 9p before 6.4 prints the cache mode as a
// bare word ("loose") and nothing for none; from 6.4 it prints a bit mask ("cache=f").
struct Negotiated {
    std::optional<uint64_t> msize;
    std::string cache;
};
Negotiated negotiated_options(Fs fs, std::string_view mount_options);

// Below this the 9p transport cannot carry a single request header plus payload.
inline constexpr uint64_t k_min_msize = 4096;

} // namespace rig::core
