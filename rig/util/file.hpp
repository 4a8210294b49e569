// SPDX-License-Identifier: MIT
// Whole files as strings, or line by line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rig::util {

// The bytes of `path`; empty when it cannot be read (callers that care check existence).
std::string read_file(const std::filesystem::path& path);

// Calls `line` for each line of `path` (without its newline), reading as it goes, so a
// log of any size costs one line of memory. False when the file cannot be opened.
bool for_each_file_line(const std::filesystem::path& path,
                        const std::function<void(std::string_view)>& line);

// The bytes an unprivileged writer may still use on the filesystem that holds `path`
// (statvfs's f_bavail); nullopt when it cannot be asked.
std::optional<uint64_t> available_bytes(const std::filesystem::path& path);

} // namespace rig::util
