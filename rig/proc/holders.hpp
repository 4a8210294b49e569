// SPDX-License-Identifier: MIT
// Which processes use a file or work in a folder, read from /proc: for removing what a
// killed process left behind only when no live one still uses it, and for naming the one
// that does.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rig::proc {

// A live process, for a message that names it.
struct ProcessRef {
    int pid = 0;
    std::string name; // its /proc/PID/comm

    bool operator==(const ProcessRef&) const = default;
};

// The processes other than this one that hold `file` open, by their /proc/PID/fd links.
// A process whose descriptors this user may not read (another user's) is not seen.
std::vector<ProcessRef> processes_with_open(const std::filesystem::path& file);

// The processes other than this one named `name` (their comm) whose working directory is
// `dir` or a folder inside it.
std::vector<ProcessRef> processes_working_in(const std::filesystem::path& dir,
                                             std::string_view name);

// "process 12 (git), process 40 (sleep)".
std::string describe(const std::vector<ProcessRef>& processes);

} // namespace rig::proc
