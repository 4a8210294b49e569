// SPDX-License-Identifier: MIT
// The guest's root: what a compile needs of the host, read-only, and nothing more. The
// host's /usr as one share, the links of a merged-/usr host's / into it (bin, sbin, lib,
// lib64), and a copy of the few files of /etc a compile reads, made by rig once and kept
// in its cache. No /etc/shadow, /root, /home, ssh keys, nor rig's database, results or
// cache: the kernel and the workload under test are hostile.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rig::guest {

struct GuestRoot {
    std::filesystem::path usr; // the host's /usr
    std::filesystem::path etc; // rig's copy of what a compile needs of /etc
    // Names in the guest's / and the link each is, as the host's / has them ("bin",
    // "usr/bin").
    std::vector<std::pair<std::string, std::string>> links;
};

// What of the host's /etc the guest gets as it is: the dynamic linker's cache and
// configuration, the alternatives (cc, c++, ...), name service and time zone settings,
// the release files, Python's site files. passwd and group are copied without people's
// accounts (system ones only, no member lists); hosts, hostname and mtab are rig's own.
inline constexpr const char* k_etc_copied[] = {
    "alternatives", "ld.so.cache", "ld.so.conf",     "ld.so.conf.d", "nsswitch.conf", "localtime",
    "timezone",     "os-release",  "debian_version", "python3",      "python3.11"};

// The guest root of the host whose / is `host`, with its /etc copy made (or found, when
// the same) under `cache_dir`/guest-root. Fails when /bin or /sbin is a folder of its own,
// not a link into /usr: the guest would have no shell.
Expected<GuestRoot> prepare_guest_root(const std::filesystem::path& cache_dir,
                                       const std::filesystem::path& host = "/");

// passwd or group text with only system entries (id below 1000, and nobody's 65534), no
// password field and no members.
std::string system_accounts(std::string_view text);

} // namespace rig::guest
