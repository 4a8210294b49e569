// SPDX-License-Identifier: MIT
// Guest kernel function profiles (`guest: {profile: [...]}`): which functions the guest
// counts calls of over the workload window and each phase. An entry names a filesystem's
// client (its row's functions, core/fs.hpp), a layer beneath them (netfs, fscache), or is
// a glob. The agent expands the globs against the kernel's available_filter_functions and
// counts with kprobe events (guests/init); each function becomes the metric
// guest.func.NAME.calls, and guest.profile.kprobes says how many it probed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

// The most functions one sample probes: each is a metric for the window and for every
// phase, and under TCG every hit costs.
inline constexpr size_t k_max_profiled_functions = 200;
// The metric that says how many functions the guest probed.
inline constexpr const char* k_profiled_metric = "guest.profile.kprobes";

// The named sets, for messages: the filesystems with functions, then netfs and fscache.
std::vector<std::string> profile_set_names();

// "" when `entry` is a set name or a glob the agent takes: letters, digits, '_', '*' and
// '?', with at least three characters before the first wildcard (a bare "*" would probe
// the kernel's first functions, not the ones meant); else what is wrong with it.
std::string profile_entry_error(std::string_view entry);

// The globs of a profile, its set names expanded, each once, in the order given.
std::vector<std::string> profile_globs(const std::vector<std::string>& profile);

} // namespace rig::core
