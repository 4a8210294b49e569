// SPDX-License-Identifier: MIT
// Seed 000's invalidation table: per kernel, the µs one full cache-invalidation round
// costs with per-inode notifications and with the epoch notification, per inode count,
// from the `inval_*` metrics rig-fuse's benchmark prints.
#pragma once

#include "core/cell.hpp"
#include "core/sample.hpp"

#include <string>
#include <vector>

namespace rig::report {

// "" when no sample carries invalidation metrics. Each figure is the median over a
// cell's samples of their per-round means; the epoch row reads "unsupported" where
// the samples say the kernel lacks FUSE_NOTIFY_INC_EPOCH, never a number.
std::string render_invalidation(const std::vector<core::Cell>& cells,
                                const std::vector<core::Sample>& samples);

} // namespace rig::report
