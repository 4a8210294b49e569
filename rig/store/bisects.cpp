// SPDX-License-Identifier: MIT
// Bisects and their steps.
#include "store/sqlite.hpp"
#include "util/json.hpp"

#include <algorithm>

namespace rig::store {

namespace {

Expected<std::vector<int64_t>> parse_id_array(const std::string& text) {
    util::Json parsed = util::Json::parse(text, nullptr, false);
    if (!parsed.is_array() || !std::all_of(parsed.begin(), parsed.end(),
                                           [](const auto& id) { return id.is_number_integer(); }))
        return fail(ErrorKind::infra,
                    "database column bisect_steps.samples: '" + text + "' is not a list of ids");
    return parsed.get<std::vector<int64_t>>();
}

const char* const k_bisect_columns =
    "id, COALESCE(run_id, 0), scenario_hash, cell_id, good, bad, criterion, status, state, "
    "COALESCE(culprit, ''), message, created_at, updated_at, cell_record";

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
    info.cell_record = statement.text(13);
    return info;
}

// The bisect as readers see it: running only while its rig lives (Database::own_bisect).
Expected<BisectInfo> read_bisect(const Impl& db, const Statement& statement) {
    BisectInfo info = RIG_TRY(read_bisect(statement));
    if (info.status == core::BisectStatus::running && owner_gone(db, "bisect", info.id))
        info.status = core::BisectStatus::interrupted;
    return info;
}

} // namespace

Expected<int64_t> Database::begin_bisect(const BisectInfo& bisect,
                                         std::optional<util::FileLock>* owner) {
    // As begin_run: the owner lock before the row is committed.
    auto transaction = RIG_TRY(Transaction::begin(*m_impl, Transaction::Mode::write));
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "INSERT INTO bisects (run_id, scenario_hash, cell_id, good, bad, criterion, "
                 "status, state, message, cell_record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                 "?7, ?8, ?9, ?10) RETURNING id"));
    statement.bind(bisect.run_id, bisect.scenario_hash, bisect.cell_id, bisect.good, bisect.bad,
                   bisect.criterion, core::to_string(bisect.status), bisect.state, bisect.message,
                   bisect.cell_record);
    RIG_TRY(statement.step());
    const int64_t id = statement.integer(0);
    RIG_TRY(statement.run());
    if (owner) {
        auto taken = RIG_TRY(own_bisect(id));
        if (!taken)
            return fail(ErrorKind::infra, "bisect " + std::to_string(id) +
                                              " of a new row is owned by another rig: " +
                                              owner_lock(*m_impl, "bisect", id).string());
        owner->emplace(std::move(*taken));
    }
    RIG_TRY(transaction.commit());
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
    return std::optional<BisectInfo>(RIG_TRY(read_bisect(*m_impl, statement)));
}

Expected<std::vector<BisectInfo>> Database::bisects() {
    auto statement = RIG_TRY(Statement::prepare(*m_impl, std::string("SELECT ") + k_bisect_columns +
                                                             " FROM bisects ORDER BY id"));
    std::vector<BisectInfo> out;
    while (RIG_TRY(statement.step()))
        out.push_back(RIG_TRY(read_bisect(*m_impl, statement)));
    return out;
}

Expected<int64_t> Database::add_bisect_step(const BisectStep& step) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "INSERT INTO bisect_steps (bisect_id, role, \"commit\", cell_id, build_outcome, "
                 "build_seconds, build_cached, samples, verdict, evidence) VALUES (?1, ?2, ?3, ?4, "
                 "?5, ?6, ?7, ?8, ?9, ?10) RETURNING id"));
    statement.bind(step.bisect_id, core::to_string(step.role), step.commit, step.cell_id,
                   step.build_outcome ? core::to_string(*step.build_outcome) : "",
                   step.build_seconds, step.build_cached ? 1 : 0, id_array(step.samples),
                   core::to_string(step.verdict), step.evidence);
    RIG_TRY(statement.step());
    const int64_t id = statement.integer(0);
    RIG_TRY(statement.run());
    return id;
}

Expected<void> Database::restate_bisect_step(int64_t step_id, core::Verdict verdict,
                                             const std::string& evidence) {
    auto statement = RIG_TRY(Statement::prepare(
        *m_impl, "UPDATE bisect_steps SET verdict = ?2, evidence = ?3 WHERE id = ?1 RETURNING id"));
    statement.bind(step_id, core::to_string(verdict), evidence);
    if (!RIG_TRY(statement.step()))
        return fail(ErrorKind::infra,
                    "no bisect step " + std::to_string(step_id) + " in the database");
    return statement.run();
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
        step.samples = RIG_TRY(parse_id_array(statement.text(8)));
        step.verdict =
            RIG_TRY(stored(core::parse_verdict(statement.text(9)), "bisect_steps.verdict"));
        step.evidence = statement.text(10);
        step.created_at = statement.text(11);
        out.push_back(std::move(step));
    }
    return out;
}

} // namespace rig::store
