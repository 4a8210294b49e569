// SPDX-License-Identifier: MIT
// The matrix axes rig knows.
#include "core/axis.hpp"

#include <algorithm>

namespace rig::core {

bool applies(const AxisDef& axis, const Kernel& kernel, const Filesystem& fs) {
    switch (axis.scope) {
    case AxisScope::every:
        return true;
    case AxisScope::git_kernels:
        return kernel.source == KernelSource::git;
    case AxisScope::series:
        return kernel.source == KernelSource::git && !kernel.series.empty();
    case AxisScope::cache:
        return has_cache_axis(fs);
    case AxisScope::filesystem:
        break;
    }
    return std::find(fs.axes.begin(), fs.axes.end(), axis.name) != fs.axes.end();
}

const std::vector<AxisDef>& axis_defs() {
    // Order here is the column order of `rig plan` and of the canonical cell text.
    static const std::vector<AxisDef> k_axes{
        {"config", AxisKind::word, "config fragment added to git kernels (debug, release)",
         AxisScope::git_kernels},
        {"series", AxisKind::word,
         "a git kernel's posted series: without or with it applied (implied: both)",
         AxisScope::series},
        {"fs", AxisKind::word, "shared filesystem: 9p, virtiofs or fuse", AxisScope::every},
        {"msize", AxisKind::size, "9p maximum message size in bytes", AxisScope::filesystem},
        {"cache", AxisKind::word, "cache mode; valid values depend on fs (not fuse)",
         AxisScope::cache},
        {"entry_timeout", AxisKind::seconds, "fuse: seconds the kernel may cache a name",
         AxisScope::filesystem},
        {"attr_timeout", AxisKind::seconds, "fuse: seconds the kernel may cache attributes",
         AxisScope::filesystem},
        {"negative_timeout", AxisKind::seconds,
         "fuse: seconds the kernel may cache a failed lookup (0: not at all)",
         AxisScope::filesystem},
        {"keep_cache", AxisKind::boolean, "fuse: keep file pages cached across opens",
         AxisScope::filesystem},
        {"writeback_cache", AxisKind::boolean, "fuse: let the kernel buffer writes",
         AxisScope::filesystem},
        {"direct_io", AxisKind::boolean, "fuse: bypass the page cache for file data",
         AxisScope::filesystem},
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
