// SPDX-License-Identifier: MIT
// Where a scenario indents with a tab, which YAML forbids and yaml-cpp reports as
// something else ("illegal map value" past the tab).
#pragma once

#include "core/scenario.hpp"

#include <optional>
#include <string_view>

namespace rig::spec {

// The first tab in a line's indentation, at its own line and column: a tab before the
// line's first character that is neither blank nor a comment. Tabs that YAML allows at a
// line's start are skipped: inside a flow collection or a quoted scalar that spans lines,
// and after a block scalar's indentation. Best effort: it may miss a tab, and it names
// the rare one YAML allows (a plain scalar's continuation line), so a caller asks only
// about a file that failed to parse.
std::optional<core::Loc> tab_in_indentation(std::string_view text);

} // namespace rig::spec
