// SPDX-License-Identifier: MIT
// Debian kernel package names: a series (linux-image-6.1), a metapackage
// (linux-image-amd64) or an exact image package, resolved to the exact package apt has
// now. Debian replaces ABI names (linux-image-6.1.0-57-amd64) at each point release and
// the old ones leave the archive, so scenarios name a series and each sample records
// what it resolved to.
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::kernel {

// The flavour a series resolves to unless the scenario names another.
inline constexpr std::string_view k_default_flavour = "amd64";

// The series an exact image package belongs to (linux-image-6.12.113+deb12-amd64-unsigned
// -> linux-image-6.12), or nullopt for a name that is not an exact image package.
std::optional<std::string> debian_series_of(std::string_view package);

// Whether `package` is an exact image package of `series` in `flavour`, signed or
// -unsigned (never -dbg).
bool in_debian_series(std::string_view package, std::string_view series, std::string_view flavour);

// `apt-cache policy A B ...` output -> package -> candidate version, leaving out packages
// with no candidate (known to apt, not downloadable).
std::map<std::string, std::string> parse_apt_policy(std::string_view text);

// The linux-image-* packages in the Depends of `apt-cache show` output: a metapackage's
// one target.
std::vector<std::string> image_dependencies(std::string_view show_text);

// The linux-headers-* and linux-kbuild-* packages in the Depends of `apt-cache show` output
// of a headers package: its -common half and the kbuild tools.
std::vector<std::string> header_dependencies(std::string_view show_text);

// What building a module against Debian kernel `release` (6.1.0-57-amd64) takes:
// linux-headers-RELEASE, then its -common and linux-kbuild-* packages, from apt-cache.
Expected<std::vector<std::string>> headers_packages(const std::string& release);

// Whether image package `a` is newer than `b` of the same series and flavour. Within a
// series the number after it rises with every upload (the ABI of 6.1.0-57, the patch
// level of 6.12.117), so the names order like their versions; at one number the signed
// name comes before its -unsigned twin, as the package Debian users install.
bool newer_image(std::string_view a, std::string_view b);

// The distinct series among package names, sorted: what the archive offers.
std::vector<std::string> series_among(const std::vector<std::string>& packages);

struct DebianPackage {
    std::string package; // exact: what apt-get download gets
    std::string version; // its candidate version
};

// The archive's sha256 of an exact package's candidate .deb, which a download is held to.
Expected<std::string> archive_sha256(const std::string& package);

// Resolves a scenario's `debian:` name with apt-cache (the local package lists, no
// network): a series to its newest image package in `flavour`, a metapackage to the
// image it depends on, an exact name to itself. A name apt does not know is a config
// error that lists the names its series does have.
Expected<DebianPackage> resolve_debian(const std::string& name, const std::string& flavour);

} // namespace rig::kernel
