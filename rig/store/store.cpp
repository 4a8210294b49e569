// SPDX-License-Identifier: MIT
// The results database on SQLite: opening, migrations, and the queries behind store.hpp.
#include "store/store.hpp"

#include "store/schema.hpp"
#include "util/lock.hpp"

#include <algorithm>
#include <concepts>
#include <cstdio>
#include <map>
#include <sqlite3.h>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

namespace rig::store {

namespace {

// Long enough for a report to wait out a sample's commit, short enough to notice a
// process that holds the write lock forever.
constexpr int k_busy_timeout_ms = 5000;

const char* const k_now = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";

// SQL text as it reads in an error message: one line, and not a page of it.
std::string statement_summary(std::string_view sql) {
    std::string out;
    for (char c : sql) {
        bool space = c == ' ' || c == '\n' || c == '\t';
        if (space && (out.empty() || out.back() == ' '))
            continue;
        out += space ? ' ' : c;
    }
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    constexpr size_t k_max = 120;
    if (out.size() > k_max)
        out = out.substr(0, k_max) + "...";
    return out;
}

// In WAL mode the write lock is a POSIX lock on byte 120 of the -shm file
// (WAL_WRITE_LOCK, https://sqlite.org/walformat.html).
constexpr uint64_t k_wal_write_lock_byte = 120;

using Clock = std::chrono::steady_clock;

// "process 1234 (sqlite3)", or "another process" when the holder cannot be named.
std::string describe_holder(const std::filesystem::path& db) {
    auto holder = util::write_lock_holder(db.string() + "-shm", k_wal_write_lock_byte);
    if (!holder)
        return "another process";
    return "process " + std::to_string(holder->pid) +
           (holder->name.empty() ? "" : " (" + holder->name + ")");
}

std::string whole_seconds(Clock::duration duration) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) +
           " s";
}

} // namespace

struct Database::Impl {
    sqlite3* m_db = nullptr;
    std::filesystem::path m_path;
    int m_version = 0;
    std::optional<LockWait> m_lock_wait;
    // The lock wait in progress: when it began, when to tell again, and whether it ended
    // because the caller asked to stop.
    Clock::time_point m_busy_since;
    Clock::time_point m_next_notice;
    bool m_busy_stopped = false;

    Impl() = default;
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    // close_v2 also copes with statements a failed path forgot to finalize.
    ~Impl() { sqlite3_close_v2(m_db); }

    Error error(std::string_view what, std::string_view detail) const {
        std::string message =
            "database " + m_path.string() + ": " + std::string(what) + ": " + std::string(detail);
        const int code = sqlite3_errcode(m_db);
        if (code == SQLITE_BUSY && m_busy_stopped)
            return Error{ErrorKind::interrupted,
                         message + " (stopped while waiting for another process's lock)"};
        if (code == SQLITE_FULL)
            message += ": free space on the filesystem that holds it";
        return Error{ErrorKind::infra, message};
    }
    Error error(std::string_view what) const { return error(what, sqlite3_errmsg(m_db)); }

    // SQLite's busy handler: true to try again. `attempts` is 0 at the first conflict of
    // a statement. Sleeps a little each time, as sqlite3_busy_timeout does.
    bool keep_waiting(int attempts) {
        const LockWait& wait = *m_lock_wait;
        auto now = Clock::now();
        if (attempts == 0) {
            m_busy_since = now;
            m_next_notice = now + wait.patience;
            m_busy_stopped = false;
        }
        if (wait.stop && *wait.stop) {
            m_busy_stopped = true;
            return false;
        }
        if (now >= m_next_notice && wait.notice) {
            wait.notice("database " + m_path.string() + ": " + describe_holder(m_path) +
                        " has held its write lock for " + whole_seconds(now - m_busy_since) +
                        "; waiting until it lets go");
            m_next_notice = now + wait.reminder;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5 * (attempts + 1), 100)));
        return true;
    }

    // For scripts and statements without parameters.
    Expected<void> exec(std::string_view what, const std::string& sql) {
        if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
            return tl::unexpected(error(what));
        return {};
    }
};

namespace {

using Impl = Database::Impl;

// A prepared statement with its parameters bound; finalized when it goes out of scope.
class Statement final {
public:
    static Expected<Statement> prepare(Impl& db, std::string_view sql) {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(db.m_db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
            SQLITE_OK)
            return tl::unexpected(db.error(statement_summary(sql)));
        return Statement(db, stmt);
    }

    Statement(Statement&& other) noexcept
        : m_db(other.m_db), m_stmt(std::exchange(other.m_stmt, nullptr)),
          m_bind_rc(other.m_bind_rc) {}
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement& operator=(Statement&&) = delete;
    ~Statement() { sqlite3_finalize(m_stmt); }

    // Binds ?1, ?2, ... in order. A bind error is reported by the next step().
    template <typename... Args> Statement& bind(const Args&... args) {
        int index = 0;
        (bind_one(++index, args), ...);
        return *this;
    }

    // True while a row is available, false once the statement is done.
    Expected<bool> step() {
        if (m_bind_rc != SQLITE_OK)
            return tl::unexpected(m_db->error(summary(), sqlite3_errstr(m_bind_rc)));
        int rc = sqlite3_step(m_stmt);
        if (rc == SQLITE_ROW)
            return true;
        if (rc == SQLITE_DONE)
            return false;
        return tl::unexpected(m_db->error(summary()));
    }

    // Runs a statement that returns no rows that rig needs.
    Expected<void> run() {
        while (RIG_TRY(step())) {
        }
        return {};
    }

    // Binds ?index alone, for statements whose number of parameters depends on the input.
    template <typename T> Statement& bind_at(int index, const T& value) {
        bind_one(index, value);
        return *this;
    }

    // Makes the statement ready to bind and run again, to insert many rows with one plan.
    void reset() {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
        m_bind_rc = SQLITE_OK;
    }

    sqlite3_stmt* handle() const { return m_stmt; }
    int64_t integer(int column) const { return sqlite3_column_int64(m_stmt, column); }
    double real(int column) const { return sqlite3_column_double(m_stmt, column); }
    std::optional<int64_t> optional_integer(int column) const {
        if (sqlite3_column_type(m_stmt, column) == SQLITE_NULL)
            return std::nullopt;
        return integer(column);
    }
    std::string text(int column) const {
        const auto* data = sqlite3_column_text(m_stmt, column);
        if (data == nullptr)
            return {};
        return {reinterpret_cast<const char*>(data),
                static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))};
    }

private:
    Statement(Impl& db, sqlite3_stmt* stmt) : m_db(&db), m_stmt(stmt) {}

    // SQLite keeps the text of what it prepared, so callers may build SQL in temporaries.
    std::string summary() const { return statement_summary(sqlite3_sql(m_stmt)); }

    void check(int rc) {
        if (m_bind_rc == SQLITE_OK)
            m_bind_rc = rc;
    }
    void bind_one(int index, std::nullptr_t) { check(sqlite3_bind_null(m_stmt, index)); }
    void bind_one(int index, double value) { check(sqlite3_bind_double(m_stmt, index, value)); }
    void bind_one(int index, std::integral auto value) {
        check(sqlite3_bind_int64(m_stmt, index, static_cast<sqlite3_int64>(value)));
    }
    void bind_one(int index, std::string_view value) {
        // A null data pointer would bind NULL, and "" must stay "".
        const char* data = value.data() != nullptr ? value.data() : "";
        check(sqlite3_bind_text(m_stmt, index, data, static_cast<int>(value.size()),
                                SQLITE_TRANSIENT));
    }
    void bind_one(int index, const std::string& value) { bind_one(index, std::string_view(value)); }
    void bind_one(int index, const char* value) { bind_one(index, std::string_view(value)); }
    template <typename T> void bind_one(int index, const std::optional<T>& value) {
        if (value)
            bind_one(index, *value);
        else
            bind_one(index, nullptr);
    }

    Impl* m_db;
    sqlite3_stmt* m_stmt;
    int m_bind_rc = SQLITE_OK;
};

// Prepares, binds and runs a statement that returns no rows.
template <typename... Args>
Expected<void> execute(Impl& db, std::string_view sql, const Args&... args) {
    auto statement = RIG_TRY(Statement::prepare(db, sql));
    return statement.bind(args...).run();
}

// Rolls back unless committed, so that every early return of a failed step undoes it.
class Transaction final {
public:
    // Writers take the write lock up front: a deferred transaction that later needs it can
    // fail with SQLITE_BUSY without waiting, when a reader's snapshot is older.
    enum class Mode { read, write };

    static Expected<Transaction> begin(Impl& db, Mode mode) {
        const char* sql = mode == Mode::write ? "BEGIN IMMEDIATE" : "BEGIN";
        RIG_TRY(db.exec(sql, sql));
        return Transaction(db);
    }

    Transaction(Transaction&& other) noexcept : m_db(std::exchange(other.m_db, nullptr)) {}
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    Transaction& operator=(Transaction&&) = delete;
    ~Transaction() {
        if (m_db != nullptr)
            sqlite3_exec(m_db->m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    }

    Expected<void> commit() {
        RIG_TRY(m_db->exec("COMMIT", "COMMIT"));
        m_db = nullptr;
        return {};
    }

private:
    explicit Transaction(Impl& db) : m_db(&db) {}
    Impl* m_db;
};

Expected<int> user_version(Impl& db) {
    auto statement = RIG_TRY(Statement::prepare(db, "PRAGMA user_version"));
    RIG_TRY(statement.step());
    return static_cast<int>(statement.integer(0));
}

Expected<void> check_not_newer(Impl& db, int version, int latest) {
    if (version <= latest)
        return {};
    return fail(ErrorKind::infra, "database " + db.m_path.string() + " has schema version " +
                                      std::to_string(version) + " but this rig knows only up to " +
                                      std::to_string(latest) +
                                      ": use a newer rig, or another database file");
}

// Each version in its own transaction, so that a failed script leaves the previous
// version intact rather than half of the next one.
Expected<void> migrate(Impl& db, const std::vector<std::string>& scripts) {
    const int latest = static_cast<int>(scripts.size());
    const int found = RIG_TRY(user_version(db));
    RIG_TRY(check_not_newer(db, found, latest));
    // Nothing to write: opening a current database must not wait for a writer's lock.
    for (int target = found + 1; target <= latest; ++target) {
        auto transaction = RIG_TRY(Transaction::begin(db, Transaction::Mode::write));
        // Read under the write lock: another rig may have migrated since we looked.
        int current = RIG_TRY(user_version(db));
        RIG_TRY(check_not_newer(db, current, latest));
        if (current >= target)
            continue;
        std::string version = std::to_string(target);
        RIG_TRY(db.exec("migration to schema version " + version, scripts[target - 1]));
        // PRAGMA takes no bound parameters; the value is our own counter, not input.
        RIG_TRY(db.exec("PRAGMA user_version = " + version, "PRAGMA user_version = " + version));
        RIG_TRY(transaction.commit());
    }
    db.m_version = RIG_TRY(user_version(db));
    return {};
}

Expected<void> configure(Impl& db) {
    // The timeout first: switching to WAL needs a lock another rig may hold.
    sqlite3_busy_timeout(db.m_db, k_busy_timeout_ms);
    RIG_TRY(db.exec("PRAGMA foreign_keys = ON", "PRAGMA foreign_keys = ON"));
    auto statement = RIG_TRY(Statement::prepare(db, "PRAGMA journal_mode = WAL"));
    RIG_TRY(statement.step());
    // SQLite keeps the old mode, without an error, where WAL cannot work (no shared memory).
    if (std::string mode = statement.text(0); mode != "wal")
        return fail(ErrorKind::infra, "database " + db.m_path.string() +
                                          ": cannot enable WAL (journal mode stays '" + mode +
                                          "'): put the database on a local filesystem");
    // With WAL, NORMAL loses at most the last commits on power loss, never consistency.
    return db.exec("PRAGMA synchronous = NORMAL", "PRAGMA synchronous = NORMAL");
}

void append_json_string(std::string& out, std::string_view text) {
    out += '"';
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            out += escaped;
        } else {
            out += c;
        }
    }
    out += '"';
}

// A JSON object rather than "k=v;k=v", so that no value needs a reserved character and
// reports can query it with SQLite's json_extract() and json_each().
std::string params_json(const std::map<std::string, std::string>& params) {
    std::string out = "{";
    for (const auto& [key, value] : params) {
        if (out.size() > 1)
            out += ',';
        append_json_string(out, key);
        out += ':';
        append_json_string(out, value);
    }
    return out + "}";
}

std::string_view to_string(core::Severity severity) {
    return severity == core::Severity::warning ? "warning" : "error";
}

std::optional<core::KernelSource> parse_kernel_source(std::string_view text) {
    for (auto source :
         {core::KernelSource::debian, core::KernelSource::image, core::KernelSource::git})
        if (to_string(source) == text)
            return source;
    return std::nullopt;
}

// A status word read back: text none of rig's words is an error naming the column.
template <typename T> Expected<T> stored(Expected<T> parsed, const char* column) {
    if (!parsed)
        return fail(ErrorKind::infra,
                    "database column " + std::string(column) + ": " + parsed.error().message);
    return parsed;
}

const char* const k_run_columns = "id, scenario_name, scenario_file, scenario_text, scenario_hash, "
                                  "host_facts, rig_version, started_at, finished_at, status";

Expected<RunInfo> read_run(const Statement& row) {
    return RunInfo{
        row.integer(0), row.text(1),
        row.text(2),    row.text(3),
        row.text(4),    row.text(5),
        row.text(6),    row.text(7),
        row.text(8),    RIG_TRY(stored(core::parse_run_status(row.text(9)), "runs.status"))};
}

Expected<std::optional<RunInfo>> query_run(Impl& db, const std::string& sql, const auto&... args) {
    auto statement = RIG_TRY(Statement::prepare(db, sql));
    if (!RIG_TRY(statement.bind(args...).step()))
        return std::nullopt;
    return RIG_TRY(read_run(statement));
}

const char* const k_sample_columns =
    "cell_id, repetition, outcome, accel, kernel_artifact, guest_seconds, wall_seconds, "
    "total_seconds, qemu_cpu_seconds, helper_cpu_seconds, host_cpu_seconds, host_cpu_percent, "
    "mount_requested, mount_negotiated, msize_negotiated, cache_negotiated, exit_status, "
    "error_count, warning_count, evidence, started_at";

Expected<core::Sample> read_sample(Impl& db, const Statement& row) {
    core::Sample sample;
    sample.id = row.integer(0);
    sample.cell_id = row.text(1);
    sample.repetition = static_cast<int>(row.integer(2));
    std::string outcome = row.text(3);
    auto parsed = core::parse_outcome(outcome);
    if (!parsed)
        return tl::unexpected(
            db.error("sample " + std::to_string(sample.id), "unknown outcome '" + outcome + "'"));
    sample.outcome = *parsed;
    sample.accel = row.text(4);
    sample.kernel_artifact = row.text(5);
    sample.guest_seconds = row.real(6);
    sample.wall_seconds = row.real(7);
    sample.total_seconds = row.real(8);
    sample.qemu_cpu_seconds = row.real(9);
    sample.helper_cpu_seconds = row.real(10);
    sample.host_cpu_seconds = row.real(11);
    sample.host_cpu_percent = row.real(12);
    sample.mount_requested = row.text(13);
    sample.mount_negotiated = row.text(14);
    if (auto msize = row.optional_integer(15))
        sample.msize_negotiated = static_cast<uint64_t>(*msize);
    sample.cache_negotiated = row.text(16);
    sample.exit_status = static_cast<int>(row.integer(17));
    sample.error_count = static_cast<int>(row.integer(18));
    sample.warning_count = static_cast<int>(row.integer(19));
    sample.evidence = row.text(20);
    sample.started_at = row.text(21);
    return sample;
}

const char* const k_artifact_columns =
    "id, cache_key, source, name, \"release\", package, package_version, \"commit\", "
    "config_hash, compiler, image_sha256, image_path, modules_path, created_at";

} // namespace

Database::Database(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Database::~Database() = default;

Expected<std::unique_ptr<Database>> Database::open(const std::filesystem::path& path) {
    return open(path, migrations());
}

Expected<std::unique_ptr<Database>> Database::open(const std::filesystem::path& path,
                                                   const std::vector<std::string>& scripts) {
    auto impl = std::make_unique<Impl>();
    impl->m_path = path;
    if (path.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec)
            return tl::unexpected(
                impl->error("cannot create folder " + path.parent_path().string(), ec.message()));
    }
    if (sqlite3_open_v2(path.c_str(), &impl->m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK)
        return tl::unexpected(impl->error("cannot open"));
    RIG_TRY(configure(*impl));
    RIG_TRY(migrate(*impl, scripts));
    return std::unique_ptr<Database>(new Database(std::move(impl)));
}

namespace {

int on_busy(void* impl, int attempts) {
    return static_cast<Impl*>(impl)->keep_waiting(attempts) ? 1 : 0;
}

} // namespace

void Database::wait_for_locks(LockWait wait) {
    m_impl->m_lock_wait = std::move(wait);
    // Replaces the busy timeout: SQLite keeps one busy handler per connection.
    sqlite3_busy_handler(m_impl->m_db, on_busy, m_impl.get());
}

int Database::schema_version() const {
    return m_impl->m_version;
}

int Database::latest_schema_version() {
    return static_cast<int>(migrations().size());
}

Expected<std::string> Database::journal_mode() {
    auto statement = RIG_TRY(Statement::prepare(*m_impl, "PRAGMA journal_mode"));
    RIG_TRY(statement.step());
    return statement.text(0);
}

Expected<int64_t> Database::begin_run(const RunInfo& run) {
    const std::string sql =
        std::string("INSERT INTO runs (scenario_name, scenario_file, scenario_text, "
                    "scenario_hash, host_facts, rig_version, started_at, status) "
                    "VALUES (?1, ?2, ?3, ?4, COALESCE(NULLIF(?5, ''), '{}'), ?6, "
                    "COALESCE(NULLIF(?7, ''), ") +
        k_now + "), ?8)";
    RIG_TRY(execute(*m_impl, sql, run.scenario_name, run.scenario_file, run.scenario_text,
                    run.scenario_hash, run.host_facts, run.rig_version, run.started_at,
                    core::to_string(run.status)));
    return sqlite3_last_insert_rowid(m_impl->m_db);
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
        out.push_back(RIG_TRY(read_run(statement)));
    return out;
}

Expected<void> Database::add_cells(int64_t run_id, const std::vector<core::Cell>& cells) {
    auto transaction = RIG_TRY(Transaction::begin(*m_impl, Transaction::Mode::write));
    auto insert = RIG_TRY(Statement::prepare(
        *m_impl, "INSERT INTO cells (run_id, cell_id, kernel_name, config, fs, msize, cache, "
                 "params, canonical) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                 "ON CONFLICT (run_id, cell_id) DO NOTHING"));
    for (const auto& cell : cells) {
        insert.reset();
        RIG_TRY(insert
                    .bind(run_id, cell.id, cell.kernel_name, cell.config,
                          core::to_string(cell.fs()), cell.msize(), cell.cache(),
                          params_json(cell.params), cell.canonical)
                    .run());
    }
    return transaction.commit();
}

Expected<std::vector<core::Cell>> Database::cells(int64_t run_id) {
    auto transaction = RIG_TRY(Transaction::begin(*m_impl, Transaction::Mode::read));
    auto select = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT cell_id, kernel_name, config, canonical, params FROM cells "
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
        out.push_back(std::move(cell));
    }
    RIG_TRY(transaction.commit());
    return out;
}

Expected<int64_t> Database::add_sample(int64_t run_id, const core::Sample& sample) {
    Impl& db = *m_impl;
    auto transaction = RIG_TRY(Transaction::begin(db, Transaction::Mode::write));

    auto existing = RIG_TRY(Statement::prepare(
        db, "SELECT id, outcome FROM samples WHERE run_id = ?1 AND cell_id = ?2 AND "
            "repetition = ?3"));
    if (RIG_TRY(existing.bind(run_id, sample.cell_id, sample.repetition).step())) {
        // An aborted sample is the trace of an interrupted run; the resumed run measures
        // it again. Anything else was measured, and a second copy would skew statistics.
        if (existing.text(1) != core::to_string(core::Outcome::aborted))
            return tl::unexpected(db.error("add sample " + sample.cell_id + " #" +
                                               std::to_string(sample.repetition) + " of run " +
                                               std::to_string(run_id),
                                           "already stored with outcome " + existing.text(1)));
        // Its error lines and metrics go with it (ON DELETE CASCADE).
        RIG_TRY(execute(db, "DELETE FROM samples WHERE id = ?1", existing.integer(0)));
    }

    RIG_TRY(execute(db,
                    std::string("INSERT INTO samples (run_id, ") + k_sample_columns +
                        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                        "?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
                    run_id, sample.cell_id, sample.repetition, core::to_string(sample.outcome),
                    sample.accel, sample.kernel_artifact, sample.guest_seconds, sample.wall_seconds,
                    sample.total_seconds, sample.qemu_cpu_seconds, sample.helper_cpu_seconds,
                    sample.host_cpu_seconds, sample.host_cpu_percent, sample.mount_requested,
                    sample.mount_negotiated, sample.msize_negotiated, sample.cache_negotiated,
                    sample.exit_status, sample.error_count, sample.warning_count, sample.evidence,
                    sample.started_at));
    const int64_t sample_id = sqlite3_last_insert_rowid(db.m_db);

    auto line = RIG_TRY(Statement::prepare(
        db, "INSERT INTO error_lines (sample_id, severity, source, line, signature) "
            "VALUES (?1, ?2, ?3, ?4, ?5)"));
    for (const auto& error_line : sample.lines) {
        line.reset();
        RIG_TRY(line.bind(sample_id, to_string(error_line.severity), error_line.source,
                          error_line.line, error_line.signature)
                    .run());
    }
    auto metric = RIG_TRY(Statement::prepare(
        db, "INSERT INTO metrics (sample_id, name, value, unit) VALUES (?1, ?2, ?3, ?4)"));
    for (const auto& m : sample.metrics) {
        metric.reset();
        RIG_TRY(metric.bind(sample_id, m.name, m.value, m.unit).run());
    }

    RIG_TRY(transaction.commit());
    return sample_id;
}

Expected<std::vector<core::Sample>> Database::samples(int64_t run_id) {
    Impl& db = *m_impl;
    // One snapshot, so that a sample written meanwhile cannot appear without its lines.
    auto transaction = RIG_TRY(Transaction::begin(db, Transaction::Mode::read));

    std::vector<core::Sample> out;
    std::unordered_map<int64_t, size_t> index_of;
    auto select =
        RIG_TRY(Statement::prepare(db, std::string("SELECT id, ") + k_sample_columns +
                                           " FROM samples WHERE run_id = ?1 ORDER BY id"));
    select.bind(run_id);
    while (RIG_TRY(select.step())) {
        out.push_back(RIG_TRY(read_sample(db, select)));
        index_of[out.back().id] = out.size() - 1;
    }

    auto lines = RIG_TRY(Statement::prepare(
        db, "SELECT l.sample_id, l.severity, l.source, l.line, l.signature FROM error_lines l "
            "JOIN samples s ON s.id = l.sample_id WHERE s.run_id = ?1 ORDER BY l.id"));
    lines.bind(run_id);
    while (RIG_TRY(lines.step())) {
        auto severity =
            lines.text(1) == "warning" ? core::Severity::warning : core::Severity::error;
        out[index_of.at(lines.integer(0))].lines.push_back(
            core::ErrorLine{severity, lines.text(2), lines.text(3), lines.text(4)});
    }

    auto metrics = RIG_TRY(Statement::prepare(
        db, "SELECT m.sample_id, m.name, m.value, m.unit FROM metrics m "
            "JOIN samples s ON s.id = m.sample_id WHERE s.run_id = ?1 ORDER BY m.id"));
    metrics.bind(run_id);
    while (RIG_TRY(metrics.step()))
        out[index_of.at(metrics.integer(0))].metrics.push_back(
            core::Metric{metrics.text(1), metrics.real(2), metrics.text(3)});

    RIG_TRY(transaction.commit());
    return out;
}

namespace {

// Run ids as a JSON array, so that one bound parameter serves any number of runs through
// json_each() and the statement text never depends on the input.
std::string id_array(const std::vector<int64_t>& ids) {
    std::string out = "[";
    for (int64_t id : ids)
        out += (out.size() > 1 ? "," : "") + std::to_string(id);
    return out + "]";
}

// Prefixes without those another one covers, so that no metric is read twice; {""} for
// every metric.
std::vector<std::string> distinct_prefixes(std::vector<std::string> prefixes) {
    std::sort(prefixes.begin(), prefixes.end());
    std::vector<std::string> out;
    for (auto& prefix : prefixes)
        if (out.empty() || prefix.rfind(out.back(), 0) != 0)
            out.push_back(std::move(prefix));
    return out;
}

// The metric columns of sample_facts' query and the join that reads them: none, every
// metric, or a range of the index per prefix (?2, ?3, ...). A name that starts with a
// prefix sorts below the prefix followed by the highest code point, U+10FFFF. One prefix,
// the table's usual case, needs no VALUES table, which costs a scan per sample; SQLite
// finds no range in an OR of ranges.
std::string metrics_join(const std::vector<std::string>& prefixes) {
    if (prefixes.empty())
        return "NULL, NULL, NULL FROM samples s";
    const std::string columns = "m.name, m.value, m.unit FROM samples s ";
    if (prefixes.front().empty())
        return columns + "LEFT JOIN metrics m ON m.sample_id = s.id";
    if (prefixes.size() == 1)
        return columns + "LEFT JOIN metrics m ON m.sample_id = s.id AND m.name >= ?2 "
                         "AND m.name < ?2 || char(1114111)";
    std::string values;
    for (size_t i = 0; i < prefixes.size(); ++i)
        values += (i ? ", (?" : "(?") + std::to_string(i + 2) + ")";
    return columns + "LEFT JOIN (VALUES " + values +
           ") p LEFT JOIN metrics m ON m.sample_id = s.id AND m.name >= p.column1 "
           "AND m.name < p.column1 || char(1114111)";
}

} // namespace

Expected<void> Database::sample_facts(const std::vector<int64_t>& run_ids,
                                      const std::vector<std::string>& metric_prefixes,
                                      const std::function<void(const SampleFacts&)>& visit) {
    // One row per metric, and one for a sample without any. SQLite runs a LEFT JOIN's left
    // table as the outer loop, so a sample's rows arrive together; both sides are read
    // from covering indexes (samples_for_reports, metrics_for_reports).
    const auto prefixes = distinct_prefixes(metric_prefixes);
    auto select = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT s.id, s.run_id, s.cell_id, s.outcome, s.guest_seconds, "
                 "s.wall_seconds, s.host_cpu_percent, s.error_count, s.warning_count, "
                 "s.msize_negotiated, s.cache_negotiated, " +
                     metrics_join(prefixes) +
                     " WHERE s.run_id IN (SELECT value FROM json_each(?1))"));
    select.bind(id_array(run_ids));
    if (!prefixes.empty() && !prefixes.front().empty())
        for (size_t i = 0; i < prefixes.size(); ++i)
            select.bind_at(static_cast<int>(i + 2), prefixes[i]);
    // Outcomes repeat; parse each spelling once rather than once per sample.
    std::map<std::string, core::Outcome, std::less<>> outcomes;
    SampleFacts facts;
    std::optional<int64_t> sample_id;
    while (RIG_TRY(select.step())) {
        const int64_t id = select.integer(0);
        if (id != sample_id) {
            if (sample_id)
                visit(facts);
            sample_id = id;
            facts.run_id = select.integer(1);
            facts.cell_id = select.text(2);
            const auto* outcome_text =
                reinterpret_cast<const char*>(sqlite3_column_text(select.handle(), 3));
            std::string_view outcome = outcome_text ? outcome_text : "";
            auto known = outcomes.find(outcome);
            if (known == outcomes.end()) {
                auto parsed = core::parse_outcome(outcome);
                if (!parsed)
                    return tl::unexpected(
                        m_impl->error("samples of run " + std::to_string(facts.run_id),
                                      "unknown outcome '" + std::string(outcome) + "'"));
                known = outcomes.emplace(std::string(outcome), *parsed).first;
            }
            facts.outcome = known->second;
            facts.guest_seconds = select.real(4);
            facts.wall_seconds = select.real(5);
            facts.host_cpu_percent = select.real(6);
            facts.error_count = static_cast<int>(select.integer(7));
            facts.warning_count = static_cast<int>(select.integer(8));
            facts.msize_negotiated.reset();
            if (auto msize = select.optional_integer(9))
                facts.msize_negotiated = static_cast<uint64_t>(*msize);
            facts.cache_negotiated = select.text(10);
            facts.metrics.clear();
        }
        if (sqlite3_column_type(select.handle(), 11) != SQLITE_NULL)
            facts.metrics.push_back(
                core::Metric{select.text(11), select.real(12), select.text(13)});
    }
    if (sample_id)
        visit(facts);
    return {};
}

Expected<std::vector<std::string>> Database::metric_names(const std::vector<int64_t>& run_ids) {
    auto select = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT DISTINCT m.name FROM samples s JOIN metrics m ON m.sample_id = s.id "
                 "WHERE s.run_id IN (SELECT value FROM json_each(?1)) ORDER BY m.name"));
    select.bind(id_array(run_ids));
    std::vector<std::string> out;
    while (RIG_TRY(select.step()))
        out.push_back(select.text(0));
    return out;
}

Expected<std::vector<KernelPackage>>
Database::kernel_packages(const std::vector<int64_t>& run_ids) {
    auto select = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT s.run_id, c.kernel_name, a.package, a.package_version, count(*) "
                 "FROM samples s JOIN cells c USING (run_id, cell_id) "
                 "JOIN kernel_artifacts a ON a.cache_key = s.kernel_artifact "
                 "WHERE s.run_id IN (SELECT value FROM json_each(?1)) AND a.package <> '' "
                 "GROUP BY s.run_id, c.kernel_name, a.package, a.package_version "
                 "ORDER BY s.run_id, c.kernel_name, a.package, a.package_version"));
    select.bind(id_array(run_ids));
    std::vector<KernelPackage> out;
    while (RIG_TRY(select.step()))
        out.push_back(KernelPackage{select.integer(0), select.text(1), select.text(2),
                                    select.text(3), select.integer(4)});
    return out;
}

Expected<std::vector<SignatureCount>>
Database::signature_counts(const std::vector<int64_t>& run_ids) {
    // Grouped in SQL: a noisy cell can carry thousands of lines with one signature.
    auto select = RIG_TRY(Statement::prepare(
        *m_impl,
        "WITH grouped AS ("
        "  SELECT s.run_id, s.cell_id, l.severity, l.signature, count(*) AS lines, "
        "         count(DISTINCT l.sample_id) AS samples, min(l.id) AS first "
        "  FROM error_lines l JOIN samples s ON s.id = l.sample_id "
        "  WHERE s.run_id IN (SELECT value FROM json_each(?1)) "
        "  GROUP BY s.run_id, s.cell_id, l.severity, l.signature) "
        "SELECT g.run_id, g.cell_id, g.severity, g.signature, g.lines, g.samples, "
        "       s.repetition, l.source, l.line, s.evidence "
        "FROM grouped g JOIN error_lines l ON l.id = g.first JOIN samples s ON s.id = l.sample_id "
        "ORDER BY g.run_id, g.cell_id, g.first"));
    select.bind(id_array(run_ids));
    std::vector<SignatureCount> out;
    while (RIG_TRY(select.step())) {
        SignatureCount& count = out.emplace_back();
        count.run_id = select.integer(0);
        count.cell_id = select.text(1);
        count.severity =
            select.text(2) == "warning" ? core::Severity::warning : core::Severity::error;
        count.signature = select.text(3);
        count.lines = select.integer(4);
        count.samples = select.integer(5);
        count.repetition = static_cast<int>(select.integer(6));
        count.source = select.text(7);
        count.line = select.text(8);
        count.evidence = select.text(9);
    }
    return out;
}

Expected<SampleKeys> Database::finished_samples(int64_t run_id) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT cell_id, repetition FROM samples WHERE run_id = ?1 AND outcome <> ?2"));
    statement.bind(run_id, core::to_string(core::Outcome::aborted));
    SampleKeys out;
    while (RIG_TRY(statement.step()))
        out.emplace(statement.text(0), static_cast<int>(statement.integer(1)));
    return out;
}

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

namespace {

std::string id_list(const std::vector<int64_t>& ids) {
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i)
        out += (i ? "," : "") + std::to_string(ids[i]);
    return out + "]";
}

std::vector<int64_t> parse_id_list(const std::string& text) {
    std::vector<int64_t> ids;
    std::string number;
    for (char c : text + ",") {
        if (c >= '0' && c <= '9') {
            number += c;
        } else if (!number.empty()) {
            ids.push_back(std::stoll(number));
            number.clear();
        }
    }
    return ids;
}

const char* const k_bisect_columns =
    "id, COALESCE(run_id, 0), scenario_hash, cell_id, good, bad, criterion, status, state, "
    "COALESCE(culprit, ''), message, created_at, updated_at";

Expected<BisectInfo> read_bisect(const Statement& statement) {
    BisectInfo info;
    info.id = statement.integer(0);
    info.run_id = statement.integer(1);
    info.scenario_hash = statement.text(2);
    info.cell_id = statement.text(3);
    info.good = statement.text(4);
    info.bad = statement.text(5);
    info.criterion = statement.text(6);
    info.status = RIG_TRY(stored(core::parse_bisect_status(statement.text(7)), "bisects.status"));
    info.state = statement.text(8);
    info.culprit = statement.text(9);
    info.message = statement.text(10);
    info.created_at = statement.text(11);
    info.updated_at = statement.text(12);
    return info;
}

} // namespace

Expected<int64_t> Database::begin_bisect(const BisectInfo& bisect) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "INSERT INTO bisects (run_id, scenario_hash, cell_id, good, bad, criterion, "
                 "status, state, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                 "?7, ?8, ?9) RETURNING id"));
    statement.bind(bisect.run_id, bisect.scenario_hash, bisect.cell_id, bisect.good, bisect.bad,
                   bisect.criterion, core::to_string(bisect.status), bisect.state, bisect.message);
    RIG_TRY(statement.step());
    const int64_t id = statement.integer(0);
    RIG_TRY(statement.run());
    return id;
}

Expected<void> Database::finish_bisect(int64_t bisect_id, core::BisectStatus status,
                                       const std::string& culprit, const std::string& message) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, std::string("UPDATE bisects SET status = ?2, culprit = NULLIF(?3, ''), "
                             "message = ?4, updated_at = ") +
                     k_now + " WHERE id = ?1 RETURNING id"));
    statement.bind(bisect_id, core::to_string(status), culprit, message);
    if (!RIG_TRY(statement.step()))
        return fail(ErrorKind::usage,
                    "no bisect " + std::to_string(bisect_id) + " in the database");
    return statement.run();
}

Expected<std::optional<BisectInfo>> Database::bisect(int64_t bisect_id) {
    auto statement = RIG_TRY(Statement::prepare(*m_impl, std::string("SELECT ") + k_bisect_columns +
                                                             " FROM bisects WHERE id = ?1"));
    statement.bind(bisect_id);
    if (!RIG_TRY(statement.step()))
        return std::optional<BisectInfo>();
    return std::optional<BisectInfo>(RIG_TRY(read_bisect(statement)));
}

Expected<std::vector<BisectInfo>> Database::bisects() {
    auto statement = RIG_TRY(Statement::prepare(*m_impl, std::string("SELECT ") + k_bisect_columns +
                                                             " FROM bisects ORDER BY id"));
    std::vector<BisectInfo> out;
    while (RIG_TRY(statement.step()))
        out.push_back(RIG_TRY(read_bisect(statement)));
    return out;
}

Expected<int64_t> Database::add_bisect_step(const BisectStep& step) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "INSERT INTO bisect_steps (bisect_id, role, \"commit\", cell_id, build_outcome, "
                 "build_seconds, build_cached, samples, verdict, evidence) VALUES (?1, ?2, ?3, ?4, "
                 "?5, ?6, ?7, ?8, ?9, ?10) RETURNING id"));
    statement.bind(step.bisect_id, core::to_string(step.role), step.commit, step.cell_id,
                   step.build_outcome ? core::to_string(*step.build_outcome) : "",
                   step.build_seconds, step.build_cached ? 1 : 0, id_list(step.samples),
                   core::to_string(step.verdict), step.evidence);
    RIG_TRY(statement.step());
    const int64_t id = statement.integer(0);
    RIG_TRY(statement.run());
    return id;
}

Expected<std::vector<BisectStep>> Database::bisect_steps(int64_t bisect_id) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT id, bisect_id, role, \"commit\", cell_id, build_outcome, build_seconds, "
                 "build_cached, samples, verdict, evidence, created_at FROM bisect_steps "
                 "WHERE bisect_id = ?1 ORDER BY id"));
    statement.bind(bisect_id);
    std::vector<BisectStep> out;
    while (RIG_TRY(statement.step())) {
        BisectStep step;
        step.id = statement.integer(0);
        step.bisect_id = statement.integer(1);
        step.role = RIG_TRY(stored(core::parse_step_role(statement.text(2)), "bisect_steps.role"));
        step.commit = statement.text(3);
        step.cell_id = statement.text(4);
        if (std::string outcome = statement.text(5); !outcome.empty())
            step.build_outcome =
                RIG_TRY(stored(core::parse_build_outcome(outcome), "bisect_steps.build_outcome"));
        step.build_seconds = statement.real(6);
        step.build_cached = statement.integer(7) != 0;
        step.samples = parse_id_list(statement.text(8));
        step.verdict =
            RIG_TRY(stored(core::parse_verdict(statement.text(9)), "bisect_steps.verdict"));
        step.evidence = statement.text(10);
        step.created_at = statement.text(11);
        out.push_back(std::move(step));
    }
    return out;
}

} // namespace rig::store
