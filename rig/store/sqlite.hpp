// SPDX-License-Identifier: MIT
// Inside store/: the SQLite connection, prepared statements and transactions that every
// query file of the store uses. Not for other folders: it includes sqlite3.h.
#pragma once

#include "store/store.hpp"
#include "util/fields.hpp"

#include <chrono>
#include <concepts>
#include <filesystem>
#include <optional>
#include <sqlite3.h>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rig::store {

using Clock = std::chrono::steady_clock;

inline constexpr const char* k_now = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";

// SQL text as it reads in an error message: one line, and not a page of it.
std::string statement_summary(std::string_view sql);

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
        if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
            message += " (the file is damaged, or not a rig database: `rig doctor` checks it)";
        return Error{ErrorKind::infra, message};
    }
    Error error(std::string_view what) const { return error(what, sqlite3_errmsg(m_db)); }

    // SQLite's busy handler: true to try again. `attempts` is 0 at the first conflict of
    // a statement. Sleeps a little each time, as sqlite3_busy_timeout does.
    bool keep_waiting(int attempts);

    // For scripts and statements without parameters.
    Expected<void> exec(std::string_view what, const std::string& sql) {
        if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
            return tl::unexpected(error(what));
        return {};
    }
};

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
    // Enums are stored as their words.
    template <typename E>
    requires std::is_enum_v<E>
    void bind_one(int index, E value) { bind_one(index, to_string(value)); }
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

// Ids as a JSON array: a step's samples, and the runs a query reads, so that one bound
// parameter serves any number of them through json_each() and the statement text never
// depends on the input.
std::string id_array(const std::vector<int64_t>& ids);

// The words of the enums records store, read back: false for text none of the words.
bool parse_word(std::string_view text, core::Outcome& out);
bool parse_word(std::string_view text, core::Figure& out);
bool parse_word(std::string_view text, core::KernelSource& out);
// Any word but "warning" is an error line, as rig has always read them.
bool parse_word(std::string_view text, core::Severity& out);
bool parse_word(std::string_view text, core::HeadStatus& out);
bool parse_word(std::string_view text, core::FindingStatus& out);
bool parse_word(std::string_view text, core::RegressionStatus& out);

// A record with a field list (util/fields.hpp) as a table's row: each field is the
// column of its name, except lists, which are child tables of their own.
template <class Record, class Visit> void visit_columns(Record& record, Visit&& visit) {
    fields(record, [&](const char* name, auto& member) {
        if constexpr (!util::k_is_vector<std::remove_cvref_t<decltype(member)>>)
            visit(name, member);
    });
}

template <class Record> std::vector<std::string> column_names() {
    Record record;
    std::vector<std::string> names;
    visit_columns(record, [&](const char* name, auto&) { names.emplace_back(name); });
    return names;
}

// The columns as a select or insert lists them, each after `prefix` ("s.") and quoted:
// some names (release, commit) are SQL keywords.
template <class Record> std::string column_list(std::string_view prefix = "") {
    std::string out;
    for (const std::string& name : column_names<Record>())
        out += (out.empty() ? "" : ", ") + std::string(prefix) + "\"" + name + "\"";
    return out;
}

// "?first, ?first+1, ..." for the record's columns.
template <class Record> std::string placeholders(int first) {
    std::string out;
    const size_t count = column_names<Record>().size();
    for (size_t i = 0; i < count; ++i)
        out += (i ? ", ?" : "?") + std::to_string(first + static_cast<int>(i));
    return out;
}

// Binds the record's columns to ?first, ?first+1, ... in the list's order.
template <class Record> void bind_fields(Statement& statement, int first, const Record& record) {
    int index = first;
    visit_columns(record,
                  [&](const char*, const auto& member) { statement.bind_at(index++, member); });
}

// Reads one column into a field, as bind_fields wrote it; false for an enum column that
// holds none of the enum's words.
template <class T> bool read_column(const Statement& row, int column, T& member) {
    if constexpr (std::is_same_v<T, std::string>)
        member = row.text(column);
    else if constexpr (std::is_enum_v<T>)
        return parse_word(row.text(column), member);
    else if constexpr (std::is_floating_point_v<T>)
        member = row.real(column);
    else if constexpr (std::is_integral_v<T>)
        member = static_cast<T>(row.integer(column));
    else if constexpr (util::k_is_optional<T>) {
        member.reset();
        if (auto value = row.optional_integer(column))
            member = static_cast<typename T::value_type>(*value);
    } else
        static_assert(!sizeof(T), "a field type the database cannot hold");
    return true;
}

// A column that holds none of its enum's words, named with its text and `what`.
inline Error unknown_word(const Impl& db, std::string_view what, const Statement& row, int column) {
    return db.error(what, std::string("unknown ") + sqlite3_column_name(row.handle(), column) +
                              " '" + row.text(column) + "'");
}

// Reads the record's columns from column `first` on, in the list's order; an enum column
// that holds none of its words is an error naming the column, the word and `what`.
template <class Record>
Expected<void> read_fields(Impl& db, const std::string& what, const Statement& row, int first,
                           Record& record) {
    int column = first;
    std::optional<int> unknown;
    visit_columns(record, [&](const char*, auto& member) {
        if (!read_column(row, column, member) && !unknown)
            unknown = column;
        ++column;
    });
    if (unknown)
        return tl::unexpected(unknown_word(db, what, row, *unknown));
    return {};
}

// A status word read back: text none of rig's words is an error naming the column.
template <typename T> Expected<T> stored(Expected<T> parsed, const char* column) {
    if (!parsed)
        return fail(ErrorKind::infra,
                    "database column " + std::string(column) + ": " + parsed.error().message);
    return parsed;
}

// Owner locks (Database::own_run): the file of a run's or a bisect's ("run", "bisect"),
// and whether its owner is gone: the file exists and nobody holds it.
std::filesystem::path owner_lock(const Impl& db, std::string_view kind, int64_t id);
bool owner_gone(const Impl& db, std::string_view kind, int64_t id);

} // namespace rig::store
