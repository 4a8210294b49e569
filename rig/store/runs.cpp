// SPDX-License-Identifier: MIT
// Runs, their libvirt hosts and their cells.
#include "store/sqlite.hpp"
#include "util/json.hpp"

namespace rig::store {

namespace {

// A JSON object rather than "k=v;k=v", so that no value needs a reserved character and
// reports can query it with SQLite's json_extract() and json_each().
std::string params_json(const std::map<std::string, std::string>& params) {
    return util::json_line(util::Json(params));
}

const char* const k_run_columns = "id, scenario_name, scenario_file, scenario_text, scenario_hash, "
                                  "host_facts, rig_version, started_at, finished_at, status, "
                                  "backend, uris, jobs";

Expected<std::vector<std::string>> read_uris(const std::string& text) {
    util::Json uris = util::Json::parse(text, nullptr, false);
    std::vector<std::string> out;
    if (!uris.is_array())
        return fail(ErrorKind::infra, "runs.uris is not a JSON array: " + text);
    for (const util::Json& uri : uris) {
        if (!uri.is_string())
            return fail(ErrorKind::infra, "runs.uris holds a non-string: " + text);
        out.push_back(uri.get<std::string>());
    }
    return out;
}

Expected<RunInfo> read_run(const Statement& row) {
    RunInfo run;
    run.id = row.integer(0);
    run.scenario_name = row.text(1);
    run.scenario_file = row.text(2);
    run.scenario_text = row.text(3);
    run.scenario_hash = row.text(4);
    run.host_facts = row.text(5);
    run.rig_version = row.text(6);
    run.started_at = row.text(7);
    run.finished_at = row.text(8);
    run.status = RIG_TRY(stored(core::parse_run_status(row.text(9)), "runs.status"));
    if (!row.text(10).empty())
        run.backend = RIG_TRY(stored(core::parse_backend(row.text(10)), "runs.backend"));
    run.uris = RIG_TRY(read_uris(row.text(11)));
    run.jobs = static_cast<int>(row.integer(12));
    return run;
}

// The run as readers see it: running only while its rig lives (Database::own_run).
Expected<RunInfo> read_run(const Impl& db, const Statement& row) {
    RunInfo run = RIG_TRY(read_run(row));
    if (run.status == core::RunStatus::running && owner_gone(db, "run", run.id))
        run.status = core::RunStatus::interrupted;
    return run;
}

Expected<std::optional<RunInfo>> query_run(Impl& db, const std::string& sql, const auto&... args) {
    auto statement = RIG_TRY(Statement::prepare(db, sql));
    if (!RIG_TRY(statement.bind(args...).step()))
        return std::nullopt;
    return RIG_TRY(read_run(db, statement));
}

} // namespace

Expected<int64_t> Database::begin_run(const RunInfo& run, std::optional<util::FileLock>* owner) {
    // The row and its owner lock at once: a rig killed between the two would otherwise
    // leave a run without a lock file, which every reader would show running for ever.
    auto transaction = RIG_TRY(Transaction::begin(*m_impl, Transaction::Mode::write));
    const std::string sql =
        std::string("INSERT INTO runs (scenario_name, scenario_file, scenario_text, "
                    "scenario_hash, host_facts, rig_version, started_at, status, backend, "
                    "uris, jobs) VALUES (?1, ?2, ?3, ?4, COALESCE(NULLIF(?5, ''), '{}'), ?6, "
                    "COALESCE(NULLIF(?7, ''), ") +
        k_now + "), ?8, ?9, ?10, ?11)";
    std::string backend = run.backend ? std::string(core::to_string(*run.backend)) : "";
    RIG_TRY(execute(*m_impl, sql, run.scenario_name, run.scenario_file, run.scenario_text,
                    run.scenario_hash, run.host_facts, run.rig_version, run.started_at,
                    core::to_string(run.status), backend, util::json_line(util::Json(run.uris)),
                    run.jobs));
    const int64_t id = sqlite3_last_insert_rowid(m_impl->m_db);
    if (owner) {
        auto taken = RIG_TRY(own_run(id));
        if (!taken)
            return fail(ErrorKind::infra, "run " + std::to_string(id) +
                                              " of a new row is owned by another rig: " +
                                              owner_lock(*m_impl, "run", id).string());
        owner->emplace(std::move(*taken));
    }
    RIG_TRY(transaction.commit());
    return id;
}

Expected<void> Database::finish_run(int64_t run_id, core::RunStatus status) {
    const std::string sql =
        std::string("UPDATE runs SET status = ?2, finished_at = ") + k_now + " WHERE id = ?1";
    RIG_TRY(execute(*m_impl, sql, run_id, core::to_string(status)));
    if (sqlite3_changes(m_impl->m_db) == 0)
        return tl::unexpected(m_impl->error("finish run " + std::to_string(run_id), "no such run"));
    return {};
}

Expected<void> Database::set_run_host(int64_t run_id, const RunHost& host) {
    const std::string sql =
        std::string("INSERT INTO run_hosts (run_id, uri, status, reason, samples) "
                    "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run_id, uri) DO UPDATE SET "
                    "status = excluded.status, reason = excluded.reason, "
                    "samples = excluded.samples, changed_at = ") +
        k_now;
    return execute(*m_impl, sql, run_id, host.uri, core::to_string(host.status), host.reason,
                   host.samples);
}

Expected<std::vector<RunHost>> Database::run_hosts(int64_t run_id) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT uri, status, reason, samples, changed_at FROM run_hosts "
                 "WHERE run_id = ?1 ORDER BY rowid"));
    statement.bind(run_id);
    std::vector<RunHost> hosts;
    while (RIG_TRY(statement.step())) {
        RunHost& host = hosts.emplace_back();
        host.uri = statement.text(0);
        host.status =
            RIG_TRY(stored(core::parse_host_status(statement.text(1)), "run_hosts.status"));
        host.reason = statement.text(2);
        host.samples = statement.integer(3);
        host.changed_at = statement.text(4);
    }
    return hosts;
}

Expected<std::optional<RunInfo>> Database::run(int64_t run_id) {
    return query_run(*m_impl, std::string("SELECT ") + k_run_columns + " FROM runs WHERE id = ?1",
                     run_id);
}

Expected<std::optional<RunInfo>> Database::last_unfinished_run(const std::string& scenario_hash) {
    return query_run(*m_impl,
                     std::string("SELECT ") + k_run_columns +
                         " FROM runs WHERE status <> 'finished' AND (?1 = '' OR scenario_hash = "
                         "?1) ORDER BY id DESC LIMIT 1",
                     scenario_hash);
}

Expected<std::vector<RunInfo>> Database::runs() {
    auto statement = RIG_TRY(Statement::prepare(*m_impl, std::string("SELECT ") + k_run_columns +
                                                             " FROM runs ORDER BY id"));
    std::vector<RunInfo> out;
    while (RIG_TRY(statement.step()))
        out.push_back(RIG_TRY(read_run(*m_impl, statement)));
    return out;
}

namespace {

// One cell's row; `record` is its encoded record, or '' for a cell stored alone.
Expected<void> insert_cell(Statement& insert, int64_t run_id, const core::Cell& cell,
                           const std::string& record) {
    insert.reset();
    return insert
        .bind(run_id, cell.id, cell.kernel_name, cell.config, std::string(cell.fs().name),
              cell.msize(), cell.cache(), params_json(cell.params), cell.canonical, cell.key,
              record)
        .run();
}

const char* const k_insert_cell =
    "INSERT INTO cells (run_id, cell_id, kernel_name, config, fs, msize, cache, params, "
    "canonical, cell_key, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
    "ON CONFLICT (run_id, cell_id) DO NOTHING";

} // namespace

Expected<void> Database::add_cells(int64_t run_id, const std::vector<core::CellRecord>& cells) {
    auto transaction = RIG_TRY(Transaction::begin(*m_impl, Transaction::Mode::write));
    auto insert = RIG_TRY(Statement::prepare(*m_impl, k_insert_cell));
    for (const auto& record : cells)
        RIG_TRY(insert_cell(insert, run_id, record.cell, core::encode(record)));
    return transaction.commit();
}

Expected<void> Database::add_cells(int64_t run_id, const std::vector<core::Cell>& cells) {
    auto transaction = RIG_TRY(Transaction::begin(*m_impl, Transaction::Mode::write));
    auto insert = RIG_TRY(Statement::prepare(*m_impl, k_insert_cell));
    for (const auto& cell : cells)
        RIG_TRY(insert_cell(insert, run_id, cell, ""));
    return transaction.commit();
}

Expected<std::vector<core::Cell>> Database::cells(int64_t run_id) {
    auto transaction = RIG_TRY(Transaction::begin(*m_impl, Transaction::Mode::read));
    auto select = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT cell_id, kernel_name, config, canonical, params, cell_key FROM cells "
                 "WHERE run_id = ?1 ORDER BY rowid"));
    auto params = RIG_TRY(Statement::prepare(*m_impl, "SELECT key, value FROM json_each(?1)"));
    select.bind(run_id);
    std::vector<core::Cell> out;
    while (RIG_TRY(select.step())) {
        core::Cell cell;
        cell.id = select.text(0);
        cell.kernel_name = select.text(1);
        cell.config = select.text(2);
        cell.canonical = select.text(3);
        params.reset();
        params.bind(select.text(4));
        while (RIG_TRY(params.step()))
            cell.params[params.text(0)] = params.text(1);
        cell.key = select.text(5);
        out.push_back(std::move(cell));
    }
    RIG_TRY(transaction.commit());
    return out;
}

Expected<std::optional<std::vector<core::CellRecord>>> Database::cell_records(int64_t run_id) {
    auto transaction = RIG_TRY(Transaction::begin(*m_impl, Transaction::Mode::read));
    auto select = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT cell_id, record FROM cells WHERE run_id = ?1 ORDER BY rowid"));
    select.bind(run_id);
    std::vector<core::CellRecord> out;
    while (RIG_TRY(select.step())) {
        if (select.text(1).empty())
            return std::nullopt;
        out.push_back(RIG_TRY(core::decode_cell_record(
            select.text(1), "run " + std::to_string(run_id) + ", cell " + select.text(0))));
    }
    RIG_TRY(transaction.commit());
    if (out.empty())
        return std::nullopt;
    return out;
}

} // namespace rig::store
