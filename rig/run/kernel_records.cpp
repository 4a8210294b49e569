// SPDX-License-Identifier: MIT
// Kernel builds and artifacts as database records.
#include "run/kernel_records.hpp"

#include "util/clock.hpp"
#include "util/fields.hpp"

#include <chrono>

namespace rig::run {

namespace {

// What every artifact's row says, whatever made it: the fields both records list, by
// name, and the paths of the artifact's files.
store::KernelArtifact artifact_record(const kernel::Artifact& artifact, std::string cache_key,
                                      core::KernelSource source, const std::string& name) {
    store::KernelArtifact record;
    util::copy_named_fields(artifact, record);
    record.cache_key = std::move(cache_key);
    record.source = source;
    record.name = name;
    record.image_path = artifact.image.string();
    record.modules_path = artifact.modules_dir.string();
    return record;
}

} // namespace

Expected<void> record_build(store::Database& db, const kernel::BuildResult& result,
                            const std::string& name) {
    std::optional<int64_t> artifact_id;
    if (result.artifact) {
        store::KernelArtifact record =
            artifact_record(*result.artifact, result.cache_key, core::KernelSource::git, name);
        record.commit = result.commit;
        record.config_hash = result.config_hash;
        record.compiler = result.compiler;
        artifact_id = RIG_TRY(db.add_kernel_artifact(record));
    }
    if (result.cache_hit)
        return {};
    store::KernelBuild build;
    build.repo = result.repo;
    build.commit = result.commit;
    build.config_hash = result.config_hash;
    build.compiler = result.compiler;
    build.outcome = result.outcome;
    build.duration_seconds = result.seconds;
    // Recorded as it ends: when it started is that long ago (left empty, the store would
    // say now).
    build.started_at =
        util::utc_text(std::chrono::system_clock::now() -
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           std::chrono::duration<double>(result.seconds)));
    build.log_path = result.log.string();
    build.error_lines = result.error_lines;
    build.artifact_id = artifact_id;
    RIG_TRY(db.add_kernel_build(build));
    return {};
}

Expected<void> record_prebuilt(store::Database& db, const kernel::Artifact& artifact,
                               const core::Kernel& kernel) {
    RIG_TRY(
        db.add_kernel_artifact(artifact_record(artifact, artifact.id, kernel.source, kernel.name)));
    return {};
}

Expected<kernel::GcResult> collect_garbage(const std::filesystem::path& cache, store::Database& db,
                                           std::chrono::hours unused_for) {
    return kernel::collect_garbage(cache, unused_for, [&](const std::string& cache_key) {
        return db.remove_kernel_artifact(cache_key);
    });
}

} // namespace rig::run
