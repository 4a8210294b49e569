// SPDX-License-Identifier: MIT
// The readback workload: files of known content written on each side of the share and read
// back on the other. The guest writes readback/g-NNNN (one awk, through its caches), the
// host readback/h-NNNN before the boot; every file is a run of lines "rig readback NAME
// OFFSET", so that a wrong file shows where it went wrong. run/outputs.hpp holds the
// guest's view and the server's against what each file should hold.
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <map>
#include <string>

namespace rig::workload {

// The folder of the share the files are in, as the outputs glob names it.
inline constexpr const char* k_readback_folder = "readback";

// What file `name` ("g-0003") holds: its lines up to at least `bytes`.
std::string readback_content(const std::string& name, uint64_t bytes);

// Every file's path in the share ("readback/g-0003") and the sha256 of what it should hold.
std::map<std::string, std::string> readback_expected(const core::ReadbackParams& params);

// Writes the host's files into the share.
Expected<void> write_readback_files(const std::filesystem::path& share,
                                    const core::ReadbackParams& params);

// The guest's script: writes its files, then reads every file of the folder back.
std::string readback_command(const core::ReadbackParams& params);

} // namespace rig::workload
