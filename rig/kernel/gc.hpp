// SPDX-License-Identifier: MIT
// The kernel cache's garbage collection, by the time each entry was last used.
#pragma once

#include "util/error.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace rig::kernel {

struct GcResult {
    size_t artifacts_removed = 0;
    size_t build_dirs_removed = 0;
    uint64_t bytes_freed = 0;
};

// Marks a file or folder of the cache as used now: collect_garbage goes by that time.
void touch(const std::filesystem::path& path);

// Removes git artifacts and build folders, built modules and Debian headers not used for
// `unused_for` (zero: all of them), and staging left by killed builds. Prebuilt kernels
// are left alone. `forget` is told each removed artifact's cache key, for the records
// that name it (run/kernel_records.hpp).
using Forget = std::function<Expected<void>(const std::string& cache_key)>;
Expected<GcResult> collect_garbage(const std::filesystem::path& cache,
                                   std::chrono::hours unused_for, const Forget& forget);

} // namespace rig::kernel
