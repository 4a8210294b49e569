// SPDX-License-Identifier: MIT
// The `guest:` and `timeouts:` keys: the guest each sample boots and how long it may take.
#pragma once

#include "core/scenario.hpp"
#include "spec/yaml_reader.hpp"
#include "util/error.hpp"

#include <vector>

namespace rig::spec {

Expected<core::Guest> read_guest(const Context& context, const Entry& entry);
Expected<core::Timeouts> read_timeouts(const Context& context, const Entry& entry);

} // namespace rig::spec
