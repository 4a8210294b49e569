// SPDX-License-Identifier: MIT
// The matrix axes rig knows.
#include "core/axis.hpp"

#include <algorithm>

namespace rig::core {

namespace {

bool always(const Kernel&, Fs) {
    return true;
}
bool only_9p(const Kernel&, Fs fs) {
    return fs == Fs::v9p;
}
bool only_fuse(const Kernel&, Fs fs) {
    return fs == Fs::fuse;
}
bool with_cache_axis(const Kernel&, Fs fs) {
    return has_cache_axis(fs);
}
bool only_git(const Kernel& kernel, Fs) {
    return kernel.source == KernelSource::git;
}

} // namespace

const std::vector<AxisDef>& axis_defs() {
    // Order here is the column order of `rig plan` and of the canonical cell text.
    static const std::vector<AxisDef> k_axes{
        {"config", AxisKind::word, "config fragment added to git kernels (debug, release)",
         only_git},
        {"fs", AxisKind::word, "shared filesystem: 9p, virtiofs or fuse", always},
        {"msize", AxisKind::size, "9p maximum message size in bytes", only_9p},
        {"cache", AxisKind::word, "cache mode; valid values depend on fs (not fuse)",
         with_cache_axis},
        {"entry_timeout", AxisKind::seconds, "fuse: seconds the kernel may cache a name",
         only_fuse},
        {"attr_timeout", AxisKind::seconds, "fuse: seconds the kernel may cache attributes",
         only_fuse},
        {"negative_timeout", AxisKind::seconds,
         "fuse: seconds the kernel may cache a failed lookup (0: not at all)", only_fuse},
        {"keep_cache", AxisKind::boolean, "fuse: keep file pages cached across opens", only_fuse},
        {"writeback_cache", AxisKind::boolean, "fuse: let the kernel buffer writes", only_fuse},
        {"direct_io", AxisKind::boolean, "fuse: bypass the page cache for file data", only_fuse},
    };
    return k_axes;
}

const AxisDef* find_axis(std::string_view name) {
    for (const auto& axis : axis_defs())
        if (axis.name == name)
            return &axis;
    return nullptr;
}

std::vector<std::string> axis_names() {
    std::vector<std::string> names;
    for (const auto& axis : axis_defs())
        names.emplace_back(axis.name);
    return names;
}

std::optional<std::string> canonical_seconds(std::string_view text) {
    size_t dot = text.find('.');
    std::string_view whole = text.substr(0, dot);
    std::string_view fraction =
        dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    auto digits = [](std::string_view part) {
        return std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    // "2." and ".5" are refused: both read like typos of a unit.
    if (whole.empty() || !digits(whole) || !digits(fraction) ||
        (dot != std::string_view::npos && fraction.empty()) || fraction.size() > 9)
        return std::nullopt;
    while (whole.size() > 1 && whole.front() == '0')
        whole.remove_prefix(1);
    while (!fraction.empty() && fraction.back() == '0')
        fraction.remove_suffix(1);
    if (whole.size() > 5)
        return std::nullopt;
    std::string canonical(whole);
    if (!fraction.empty())
        canonical += "." + std::string(fraction);
    if (std::stod(canonical) > k_max_axis_seconds)
        return std::nullopt;
    return canonical;
}

std::optional<std::string> canonical_boolean(std::string_view text) {
    if (text == "true" || text == "false")
        return std::string(text);
    return std::nullopt;
}

} // namespace rig::core
