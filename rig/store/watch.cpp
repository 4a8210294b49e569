// SPDX-License-Identifier: MIT
// `rig watch`'s heads, findings and regressions: each table's statements made from its
// record's field list.
#include "store/sqlite.hpp"

namespace rig::store {

bool parse_word(std::string_view text, core::HeadStatus& out) {
    auto parsed = core::parse_head_status(text);
    if (parsed)
        out = *parsed;
    return parsed.has_value();
}

bool parse_word(std::string_view text, core::FindingStatus& out) {
    auto parsed = core::parse_finding_status(text);
    if (parsed)
        out = *parsed;
    return parsed.has_value();
}

bool parse_word(std::string_view text, core::RegressionStatus& out) {
    auto parsed = core::parse_regression_status(text);
    if (parsed)
        out = *parsed;
    return parsed.has_value();
}

namespace {

// A time column left "" is now.
bool is_time(const std::string& name) {
    return name == "created_at" || name == "updated_at";
}

template <class Record>
Expected<int64_t> insert(Impl& db, const std::string& table, const Record& record,
                         const std::string& conflict) {
    std::string values;
    int index = 0;
    for (const std::string& name : column_names<Record>()) {
        const std::string parameter = "?" + std::to_string(++index);
        values +=
            (index > 1 ? ", " : "") +
            (is_time(name) ? "COALESCE(NULLIF(" + parameter + ", ''), " + k_now + ")" : parameter);
    }
    // On a conflict the stored row stays as it is; a no-op update lets RETURNING name it.
    auto statement = RIG_TRY(Statement::prepare(
        db, "INSERT INTO " + table + " (" + column_list<Record>() + ") VALUES (" + values +
                ") ON CONFLICT (" + conflict + ") DO UPDATE SET id = id RETURNING id"));
    bind_fields(statement, 1, record);
    RIG_TRY(statement.step());
    const int64_t id = statement.integer(0);
    RIG_TRY(statement.run());
    return id;
}

template <class Record>
Expected<void> update(Impl& db, const std::string& table, const Record& record) {
    std::string sets;
    int index = 1;
    for (const std::string& name : column_names<Record>()) {
        ++index;
        // updated_at is now; its parameter is bound with the others and read as nothing.
        const std::string parameter = "?" + std::to_string(index);
        sets += (sets.empty() ? "\"" : ", \"") + name + "\" = " +
                (name == "updated_at" ? std::string(k_now) + " || substr(" + parameter + ", 1, 0)"
                                      : parameter);
    }
    auto statement = RIG_TRY(
        Statement::prepare(db, "UPDATE " + table + " SET " + sets + " WHERE id = ?1 RETURNING id"));
    statement.bind_at(1, record.id);
    bind_fields(statement, 2, record);
    if (!RIG_TRY(statement.step()))
        return fail(ErrorKind::infra,
                    "no row " + std::to_string(record.id) + " in " + table + " to update");
    return statement.run();
}

template <class Record, class Key>
Expected<std::vector<Record>> select(Impl& db, const std::string& table, const std::string& where,
                                     const Key& key) {
    auto statement =
        RIG_TRY(Statement::prepare(db, "SELECT id, " + column_list<Record>() + " FROM " + table +
                                           " WHERE " + where + " = ?1 ORDER BY id"));
    statement.bind(key);
    std::vector<Record> out;
    while (RIG_TRY(statement.step())) {
        Record record;
        record.id = statement.integer(0);
        RIG_TRY(read_fields(db, table + " row " + std::to_string(record.id), statement, 1, record));
        out.push_back(std::move(record));
    }
    return out;
}

} // namespace

Expected<int64_t> Database::add_watch_head(const WatchHead& head) {
    return insert(*m_impl, "watch_heads", head, "watch, \"commit\"");
}
Expected<void> Database::update_watch_head(const WatchHead& head) {
    return update(*m_impl, "watch_heads", head);
}
Expected<std::vector<WatchHead>> Database::watch_heads(const std::string& watch) {
    return select<WatchHead>(*m_impl, "watch_heads", "watch", watch);
}
Expected<std::vector<std::string>> Database::watches() {
    auto statement = RIG_TRY(
        Statement::prepare(*m_impl, "SELECT DISTINCT watch FROM watch_heads ORDER BY watch"));
    std::vector<std::string> out;
    while (RIG_TRY(statement.step()))
        out.push_back(statement.text(0));
    return out;
}
Expected<int64_t> Database::add_watch_finding(const WatchFinding& finding) {
    return insert(*m_impl, "watch_findings", finding, "head_id, cell_key, criterion, baseline");
}
Expected<void> Database::update_watch_finding(const WatchFinding& finding) {
    return update(*m_impl, "watch_findings", finding);
}
Expected<std::vector<WatchFinding>> Database::watch_findings(int64_t head_id) {
    return select<WatchFinding>(*m_impl, "watch_findings", "head_id", head_id);
}
Expected<int64_t> Database::add_watch_regression(const WatchRegression& regression) {
    return insert(*m_impl, "watch_regressions", regression, "watch, culprit, cell_key, criterion");
}
Expected<void> Database::update_watch_regression(const WatchRegression& regression) {
    return update(*m_impl, "watch_regressions", regression);
}
Expected<std::vector<WatchRegression>> Database::watch_regressions(const std::string& watch) {
    return select<WatchRegression>(*m_impl, "watch_regressions", "watch", watch);
}

} // namespace rig::store
