// SPDX-License-Identifier: MIT
// The matrix axes rig knows, with the value kind each takes and the cells it applies to.
#pragma once

#include "core/fs.hpp"
#include "core/scenario.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

enum class AxisKind {
    word,    // a name from a closed or open set
    size,    // bytes; "512K" is canonicalised to "524288"
    seconds, // a non-negative decimal; "0.50" is canonicalised to "0.5", "1.0" to "1"
    boolean, // true or false
};

// The cells an axis applies to; elsewhere it means nothing (msize on virtiofs) and the
// cell is not multiplied by it.
enum class AxisScope {
    every,
    git_kernels,
    series,     // git kernels with a `series:`
    cache,      // filesystems with cache modes (core/fs.hpp)
    filesystem, // the filesystems that list the axis among their own (Filesystem::axes)
};

struct AxisDef {
    std::string_view name;
    AxisKind kind;
    std::string_view help;
    AxisScope scope;
};

bool applies(const AxisDef& axis, const Kernel& kernel, const Filesystem& fs);

const std::vector<AxisDef>& axis_defs();
const AxisDef* find_axis(std::string_view name);
std::vector<std::string> axis_names();

// The most a seconds axis takes: a day is already "cache forever" for any workload.
inline constexpr double k_max_axis_seconds = 86400;

// Canonical text of a seconds value ("0.500" -> "0.5", "01" -> "1", "2." is refused):
// digits with at most 9 decimals (the kernel keeps nanoseconds), at most
// k_max_axis_seconds. nullopt when the text is not such a number.
std::optional<std::string> canonical_seconds(std::string_view text);
// "true" or "false"; nullopt for anything else (YAML's yes/no/on/off included).
std::optional<std::string> canonical_boolean(std::string_view text);

} // namespace rig::core
