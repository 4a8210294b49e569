// SPDX-License-Identifier: MIT
// Kernel artifacts and git kernel builds.
#include "store/sqlite.hpp"

namespace rig::store {

Expected<int64_t> Database::add_kernel_artifact(const KernelArtifact& artifact) {
    // Built from the field list: created_at "" stores now, and a second artifact of one
    // cache key replaces the first's every column.
    std::string values, updates;
    int index = 0;
    for (const std::string& name : column_names<KernelArtifact>()) {
        const std::string parameter = "?" + std::to_string(++index);
        values += (index > 1 ? ", " : "") +
                  (name == "created_at"
                       ? "COALESCE(NULLIF(" + parameter + ", ''), " + std::string(k_now) + ")"
                       : parameter);
        if (name != "cache_key")
            updates += (updates.empty() ? "\"" : ", \"") + name + "\" = excluded.\"" + name + "\"";
    }
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "INSERT INTO kernel_artifacts (" + column_list<KernelArtifact>() + ") VALUES (" +
                     values + ") ON CONFLICT (cache_key) DO UPDATE SET " + updates +
                     " RETURNING id"));
    bind_fields(statement, 1, artifact);
    RIG_TRY(statement.step());
    const int64_t id = statement.integer(0);
    // RETURNING hands the row over before the statement is done; finishing it commits.
    RIG_TRY(statement.run());
    return id;
}

namespace {

Expected<KernelArtifact> artifact_from_row(Impl& db, const Statement& statement) {
    KernelArtifact artifact;
    artifact.id = statement.integer(0);
    RIG_TRY(read_fields(db, "kernel artifact " + statement.text(1), statement, 1, artifact));
    return artifact;
}

const std::string& artifact_columns() {
    static const std::string columns = "id, " + column_list<KernelArtifact>();
    return columns;
}

} // namespace

Expected<std::optional<KernelArtifact>>
Database::find_kernel_artifact(const std::string& cache_key) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT " + artifact_columns() + " FROM kernel_artifacts WHERE cache_key = ?1"));
    if (!RIG_TRY(statement.bind(cache_key).step()))
        return std::nullopt;
    return RIG_TRY(artifact_from_row(*m_impl, statement));
}

Expected<std::vector<KernelArtifact>> Database::kernel_artifacts() {
    auto statement = RIG_TRY(Statement::prepare(*m_impl, "SELECT " + artifact_columns() +
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
