// SPDX-License-Identifier: MIT
// The log follower and line splitter under the names run/ has always used; they live in
// util/follow.hpp, where kernel/ can reach them too.
#pragma once

#include "util/follow.hpp"

namespace rig::run {

using util::FileFollower;
using util::LineSplitter;

} // namespace rig::run
