// SPDX-License-Identifier: MIT
// The matrix axes rig knows.
#include "core/axis.hpp"

namespace rig::core {

namespace {

bool always(const Kernel&, Fs) {
    return true;
}
bool only_9p(const Kernel&, Fs fs) {
    return fs == Fs::v9p;
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
        {"fs", AxisKind::word, "shared filesystem: 9p or virtiofs", always},
        {"msize", AxisKind::size, "9p maximum message size in bytes", only_9p},
        {"cache", AxisKind::word, "cache mode; valid values depend on fs", always},
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

} // namespace rig::core
