// SPDX-License-Identifier: MIT
// SHA-256 of strings and files, as lowercase hex.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace rig::util {

std::string sha256_hex(std::string_view data);
Expected<std::string> sha256_file(const std::filesystem::path& path);
// What an open file holds from its current offset on; the descriptor stays the caller's.
Expected<std::string> sha256_fd(int fd);

} // namespace rig::util
