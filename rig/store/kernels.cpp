// SPDX-License-Identifier: MIT
// Kernel artifacts and git kernel builds.
#include "store/sqlite.hpp"

namespace rig::store {

namespace {

std::optional<core::KernelSource> parse_kernel_source(std::string_view text) {
    for (auto source :
         {core::KernelSource::debian, core::KernelSource::image, core::KernelSource::git})
        if (to_string(source) == text)
            return source;
    return std::nullopt;
}

const char* const k_artifact_columns =
    "id, cache_key, source, name, \"release\", package, package_version, \"commit\", "
    "config_hash, compiler, image_sha256, image_path, modules_path, created_at";

} // namespace

Expected<int64_t> Database::add_kernel_artifact(const KernelArtifact& artifact) {
    const std::string sql =
        std::string("INSERT INTO kernel_artifacts (cache_key, source, name, \"release\", package, "
                    "package_version, \"commit\", config_hash, compiler, image_sha256, image_path, "
                    "modules_path, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                    "?11, ?12, COALESCE(NULLIF(?13, ''), ") +
        k_now +
        ")) ON CONFLICT (cache_key) DO UPDATE SET source = excluded.source, "
        "name = excluded.name, \"release\" = excluded.\"release\", package = excluded.package, "
        "package_version = excluded.package_version, \"commit\" = excluded.\"commit\", "
        "config_hash = excluded.config_hash, compiler = excluded.compiler, "
        "image_sha256 = excluded.image_sha256, image_path = excluded.image_path, "
        "modules_path = excluded.modules_path, created_at = excluded.created_at RETURNING id";
    auto statement = RIG_TRY(Statement::prepare(*m_impl, sql));
    statement.bind(artifact.cache_key, to_string(artifact.source), artifact.name, artifact.release,
                   artifact.package, artifact.package_version, artifact.commit,
                   artifact.config_hash, artifact.compiler, artifact.image_sha256,
                   artifact.image_path, artifact.modules_path, artifact.created_at);
    RIG_TRY(statement.step());
    const int64_t id = statement.integer(0);
    // RETURNING hands the row over before the statement is done; finishing it commits.
    RIG_TRY(statement.run());
    return id;
}

namespace {

Expected<KernelArtifact> artifact_from_row(Impl& db, const Statement& statement) {
    auto source = parse_kernel_source(statement.text(2));
    if (!source)
        return tl::unexpected(db.error("kernel artifact " + statement.text(1),
                                       "unknown source '" + statement.text(2) + "'"));
    KernelArtifact artifact;
    artifact.id = statement.integer(0);
    artifact.cache_key = statement.text(1);
    artifact.source = *source;
    artifact.name = statement.text(3);
    artifact.release = statement.text(4);
    artifact.package = statement.text(5);
    artifact.package_version = statement.text(6);
    artifact.commit = statement.text(7);
    artifact.config_hash = statement.text(8);
    artifact.compiler = statement.text(9);
    artifact.image_sha256 = statement.text(10);
    artifact.image_path = statement.text(11);
    artifact.modules_path = statement.text(12);
    artifact.created_at = statement.text(13);
    return artifact;
}

} // namespace

Expected<std::optional<KernelArtifact>>
Database::find_kernel_artifact(const std::string& cache_key) {
    auto statement =
        RIG_TRY(Statement::prepare(*m_impl, std::string("SELECT ") + k_artifact_columns +
                                                " FROM kernel_artifacts WHERE cache_key = ?1"));
    if (!RIG_TRY(statement.bind(cache_key).step()))
        return std::nullopt;
    return RIG_TRY(artifact_from_row(*m_impl, statement));
}

Expected<std::vector<KernelArtifact>> Database::kernel_artifacts() {
    auto statement =
        RIG_TRY(Statement::prepare(*m_impl, std::string("SELECT ") + k_artifact_columns +
                                                " FROM kernel_artifacts ORDER BY id"));
    std::vector<KernelArtifact> artifacts;
    while (RIG_TRY(statement.step()))
        artifacts.push_back(RIG_TRY(artifact_from_row(*m_impl, statement)));
    return artifacts;
}

Expected<void> Database::remove_kernel_artifact(const std::string& cache_key) {
    return execute(*m_impl, "DELETE FROM kernel_artifacts WHERE cache_key = ?1", cache_key);
}

Expected<int64_t> Database::add_kernel_build(const KernelBuild& build) {
    const std::string sql =
        std::string("INSERT INTO kernel_builds (repo, \"commit\", config_hash, compiler, outcome, "
                    "duration_seconds, log_path, error_lines, artifact_id, started_at) VALUES "
                    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, COALESCE(NULLIF(?10, ''), ") +
        k_now + ")) RETURNING id";
    auto statement = RIG_TRY(Statement::prepare(*m_impl, sql));
    statement.bind(build.repo, build.commit, build.config_hash, build.compiler,
                   core::to_string(build.outcome), build.duration_seconds, build.log_path,
                   build.error_lines, build.artifact_id, build.started_at);
    RIG_TRY(statement.step());
    const int64_t id = statement.integer(0);
    RIG_TRY(statement.run());
    return id;
}

Expected<std::vector<KernelBuild>> Database::kernel_builds() {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT id, repo, \"commit\", config_hash, compiler, outcome, duration_seconds, "
                 "log_path, error_lines, artifact_id, started_at FROM kernel_builds ORDER BY id"));
    std::vector<KernelBuild> builds;
    while (RIG_TRY(statement.step())) {
        KernelBuild build;
        build.id = statement.integer(0);
        build.repo = statement.text(1);
        build.commit = statement.text(2);
        build.config_hash = statement.text(3);
        build.compiler = statement.text(4);
        build.outcome =
            RIG_TRY(stored(core::parse_build_outcome(statement.text(5)), "kernel_builds.outcome"));
        build.duration_seconds = statement.real(6);
        build.log_path = statement.text(7);
        build.error_lines = statement.text(8);
        build.artifact_id = statement.optional_integer(9);
        build.started_at = statement.text(10);
        builds.push_back(std::move(build));
    }
    return builds;
}

} // namespace rig::store
