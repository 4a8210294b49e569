// SPDX-License-Identifier: MIT
// The schema's migration scripts, kept apart from the code that runs them.
#pragma once

#include <string>
#include <vector>

namespace rig::store {

// Script i turns a database at version i into one at version i + 1. Append only: a script
// that was released never changes, because databases in the field already ran it.
const std::vector<std::string>& migrations();

} // namespace rig::store
