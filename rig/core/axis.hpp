// SPDX-License-Identifier: MIT
// The matrix axes rig knows, with the value kind each takes and the cells it applies to.
#pragma once

#include "core/fs.hpp"
#include "core/scenario.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

enum class AxisKind {
    word, // a name from a closed or open set
    size, // bytes; "512K" is canonicalised to "524288"
};

struct AxisDef {
    std::string_view name;
    AxisKind kind;
    std::string_view help;
    // False where the axis means nothing (msize on virtiofs): the cell is not multiplied.
    bool (*applies)(const Kernel& kernel, Fs fs);
};

const std::vector<AxisDef>& axis_defs();
const AxisDef* find_axis(std::string_view name);
std::vector<std::string> axis_names();

} // namespace rig::core
