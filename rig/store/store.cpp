// SPDX-License-Identifier: MIT
// The results database on SQLite: opening, migrations and the connection's settings.
#include "store/aggregates.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace rig::store {

namespace {

// Long enough for a report to wait out a sample's commit, short enough to notice a
// process that holds the write lock forever.
constexpr int k_busy_timeout_ms = 5000;

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
        // Only rig's own scripts create the tables it fills; a test's stand-ins do not.
        if (&scripts == &migrations() && target == k_cell_aggregates_version)
            RIG_TRY(fill_aggregates(db));
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

// Access::existing: the file must be there; opening would otherwise create it.
Expected<void> check_exists(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec))
        return {};
    if (std::filesystem::exists(path, ec))
        return fail(ErrorKind::usage, "database " + path.string() + " is not a file");
    return fail(ErrorKind::usage, "no results database at " + path.string() +
                                      " (it does not exist): `rig run` a scenario first, or "
                                      "pass --db");
}

// Access::existing: a file SQLite reads, with rig's schema in it, before anything is
// written. An empty file is a valid empty SQLite database to SQLite, not to rig.
Expected<void> check_rig_database(Impl& db) {
    std::error_code ec;
    auto size = std::filesystem::file_size(db.m_path, ec);
    auto not_rigs = [&](const std::string& why) {
        return fail(ErrorKind::infra, db.m_path.string() + " is not a rig database (" + why +
                                          "); pass the results database with --db");
    };
    if (!ec && size == 0)
        return not_rigs("an empty file");
    auto version = user_version(db);
    if (!version)
        return not_rigs(sqlite3_errcode(db.m_db) == SQLITE_NOTADB ? "not SQLite"
                                                                  : version.error().message);
    if (*version == 0)
        return not_rigs("a SQLite database without rig's schema");
    return {};
}

int on_busy(void* impl, int attempts) {
    return static_cast<Impl*>(impl)->keep_waiting(attempts) ? 1 : 0;
}

} // namespace

Database::Database(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Database::~Database() = default;

Expected<std::unique_ptr<Database>> Database::open(const std::filesystem::path& path,
                                                   Access access) {
    return open(path, migrations(), access);
}

Expected<std::unique_ptr<Database>> Database::open(const std::filesystem::path& path,
                                                   const std::vector<std::string>& scripts,
                                                   Access access) {
    auto impl = std::make_unique<Impl>();
    impl->m_path = path;
    int flags = SQLITE_OPEN_READWRITE;
    if (access == Access::create) {
        flags |= SQLITE_OPEN_CREATE;
        if (path.has_parent_path()) {
            std::error_code ec;
            std::filesystem::create_directories(path.parent_path(), ec);
            if (ec)
                return tl::unexpected(impl->error(
                    "cannot create folder " + path.parent_path().string(), ec.message()));
        }
    } else {
        RIG_TRY(check_exists(path));
    }
    if (sqlite3_open_v2(path.c_str(), &impl->m_db, flags, nullptr) != SQLITE_OK)
        return tl::unexpected(impl->error("cannot open"));
    // Before WAL is enabled, which writes SQLite's header into an empty file.
    if (access == Access::existing) {
        sqlite3_busy_timeout(impl->m_db, k_busy_timeout_ms);
        RIG_TRY(check_rig_database(*impl));
    }
    RIG_TRY(configure(*impl));
    RIG_TRY(migrate(*impl, scripts));
    return std::unique_ptr<Database>(new Database(std::move(impl)));
}

Expected<Integrity> Database::check_integrity(const std::filesystem::path& path) {
    RIG_TRY(check_exists(path));
    Impl impl;
    impl.m_path = path;
    if (sqlite3_open_v2(path.c_str(), &impl.m_db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
        return tl::unexpected(impl.error("cannot open"));
    sqlite3_busy_timeout(impl.m_db, k_busy_timeout_ms);
    Integrity integrity;
    auto version = user_version(impl);
    if (!version) {
        integrity.detail = version.error().message;
        return integrity;
    }
    auto check = Statement::prepare(impl, "PRAGMA quick_check(5)");
    std::vector<std::string> problems;
    while (check) {
        auto row = check->step();
        if (!row) {
            check = tl::unexpected(row.error());
            break;
        }
        if (!*row)
            break;
        problems.push_back(check->text(0));
    }
    if (!check) {
        integrity.detail = check.error().message;
        return integrity;
    }
    integrity.ok = problems == std::vector<std::string>{"ok"};
    if (integrity.ok && *version == 0) {
        integrity.ok = false;
        integrity.detail = path.string() + " is not a rig database (no rig schema)";
    } else if (integrity.ok) {
        integrity.detail = "ok, schema version " + std::to_string(*version);
    } else {
        integrity.detail = path.string() + " is damaged: " + util::join(problems, "; ");
    }
    return integrity;
}

namespace {

// The first column of a query's rows, from a read-only connection that waits for a writer
// a moment at most: a completion that hangs is worse than one without ids.
Expected<std::vector<int64_t>> read_ids(const std::filesystem::path& path, std::string_view sql) {
    RIG_TRY(check_exists(path));
    Impl impl;
    impl.m_path = path;
    if (sqlite3_open_v2(path.c_str(), &impl.m_db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
        return tl::unexpected(impl.error("cannot open"));
    sqlite3_busy_timeout(impl.m_db, 200);
    auto statement = RIG_TRY(Statement::prepare(impl, sql));
    std::vector<int64_t> ids;
    while (RIG_TRY(statement.step()))
        ids.push_back(statement.integer(0));
    return ids;
}

} // namespace

Expected<std::vector<int64_t>> Database::run_ids(const std::filesystem::path& path) {
    return read_ids(path, "SELECT id FROM runs ORDER BY id");
}

Expected<std::vector<int64_t>> Database::bisect_ids(const std::filesystem::path& path) {
    return read_ids(path, "SELECT id FROM bisects ORDER BY id");
}

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

std::filesystem::path owner_lock(const Impl& db, std::string_view kind, int64_t id) {
    return std::filesystem::path(db.m_path.string() + "-owners") /
           (std::string(kind) + "-" + std::to_string(id));
}

bool owner_gone(const Impl& db, std::string_view kind, int64_t id) {
    return util::lock_state(owner_lock(db, kind, id)) == util::LockState::free;
}

namespace {

Expected<std::optional<util::FileLock>> own(const Impl& db, std::string_view kind, int64_t id) {
    std::filesystem::path file = owner_lock(db, kind, id);
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec)
        return fail(ErrorKind::infra,
                    "cannot create " + file.parent_path().string() + ": " + ec.message());
    return util::FileLock::try_own(file);
}

} // namespace

Expected<std::optional<util::FileLock>> Database::own_run(int64_t run_id) {
    return own(*m_impl, "run", run_id);
}

Expected<std::optional<util::FileLock>> Database::own_bisect(int64_t bisect_id) {
    return own(*m_impl, "bisect", bisect_id);
}

Expected<std::string> Database::journal_mode() {
    auto statement = RIG_TRY(Statement::prepare(*m_impl, "PRAGMA journal_mode"));
    RIG_TRY(statement.step());
    return statement.text(0);
}

} // namespace rig::store
