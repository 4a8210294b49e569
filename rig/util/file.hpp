// SPDX-License-Identifier: MIT
// Whole files as strings, or line by line.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rig::util {

// The bytes of `path`; empty when it cannot be read (callers that care check existence).
std::string read_file(const std::filesystem::path& path);

// Writes `text` to a temporary file beside `path`, flushes it to disk and renames it over
// `path`, so that a reader (on this machine or another) sees the old file or the whole
// new one, never half of it. The error names the file.
// `Sync::skip` leaves out the flush: readers on this machine still never see half a file,
// and rewriting thousands of small files does not wait for the disk each time.
enum class Sync { to_disk, skip };
Expected<void> write_file_atomically(const std::filesystem::path& path, std::string_view text,
                                     Sync sync = Sync::to_disk);

// Calls `line` for each line of `path` (without its newline), reading as it goes, so a
// log of any size costs one line of memory. False when the file cannot be opened.

bool for_each_file_line(const std::filesystem::path& path,
                        const std::function<void(std::string_view)>& line);

// The bytes an unprivileged writer may still use on the filesystem that holds `path`
// (statvfs's f_bavail); nullopt when it cannot be asked.
std::optional<uint64_t> available_bytes(const std::filesystem::path& path);

// The first file in `folder` whose name ends in `extension` (".deb"), or empty: for cache
// folders that hold one such file.
std::filesystem::path file_with_extension(const std::filesystem::path& folder,
                                          std::string_view extension);

} // namespace rig::util
