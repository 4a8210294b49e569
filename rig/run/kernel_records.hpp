// SPDX-License-Identifier: MIT
// The kernel cache as the database records it: builds and artifacts stored, and the
// cache's garbage collection forgetting the artifacts it removes. Here, above kernel/ and
// store/, so that neither knows the other.
#pragma once

#include "kernel/artifact.hpp"
#include "kernel/build.hpp"
#include "kernel/gc.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

#include <chrono>
#include <filesystem>
#include <string>

namespace rig::run {

// Stores a build's result: the artifact (when ok) and, unless it was a cache hit, the
// build with its outcome, duration, log and error lines. `name` is the kernel's.
Expected<void> record_build(store::Database& db, const kernel::BuildResult& result,
                            const std::string& name);

// Stores a prebuilt kernel's artifact (what a Debian name resolved to included) under the
// scenario's kernel `name`.
Expected<void> record_prebuilt(store::Database& db, const kernel::Artifact& artifact,
                               const core::Kernel& kernel);

// kernel::collect_garbage, removing each artifact it removes from the database too.
Expected<kernel::GcResult> collect_garbage(const std::filesystem::path& cache, store::Database& db,
                                           std::chrono::hours unused_for);

} // namespace rig::run
