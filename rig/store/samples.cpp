// SPDX-License-Identifier: MIT
// Samples with their error lines and metrics, and what the per-cell aggregates read of them.
#include "store/aggregates.hpp"
#include "util/json.hpp"

#include <algorithm>
#include <unordered_map>

namespace rig::store {

namespace {

// The columns the per-cell aggregates take of each sample (SampleRow); each is a field of
// core::Sample's list.
const std::vector<std::string> k_aggregated_columns = {
    "cell_id",          "outcome",     "kernel_artifact", "guest_seconds",    "wall_seconds",
    "host_cpu_percent", "error_count", "warning_count",   "msize_negotiated", "cache_negotiated"};

} // namespace

Expected<int64_t> Database::add_sample(int64_t run_id, const core::Sample& sample) {
    Impl& db = *m_impl;
    auto transaction = RIG_TRY(Transaction::begin(db, Transaction::Mode::write));

    AggregateWriter aggregates;
    auto existing = RIG_TRY(Statement::prepare(
        db, "SELECT id, outcome, msize_negotiated, cache_negotiated, error_count, warning_count, "
            "kernel_artifact FROM samples WHERE run_id = ?1 AND cell_id = ?2 AND repetition = ?3"));
    if (RIG_TRY(existing.bind(run_id, sample.cell_id, sample.repetition).step())) {
        // An aborted sample is the trace of an interrupted run; the resumed run measures
        // it again. Anything else was measured, and a second copy would skew statistics.
        if (existing.text(1) != core::to_string(core::Outcome::aborted))
            return tl::unexpected(db.error("add sample " + sample.cell_id + " #" +
                                               std::to_string(sample.repetition) + " of run " +
                                               std::to_string(run_id),
                                           "already stored with outcome " + existing.text(1)));
        // Its error lines and metrics go with it (ON DELETE CASCADE); its count in the
        // aggregates is taken back. Aborted is not measured, so it added no figures.
        core::Sample replaced;
        replaced.cell_id = sample.cell_id;
        replaced.outcome = core::Outcome::aborted;
        read_column(existing, 2, replaced.msize_negotiated);
        replaced.cache_negotiated = existing.text(3);
        replaced.error_count = static_cast<int>(existing.integer(4));
        replaced.warning_count = static_cast<int>(existing.integer(5));
        replaced.kernel_artifact = existing.text(6);
        aggregates.add(run_id, replaced, -1);
        RIG_TRY(execute(db, "DELETE FROM samples WHERE id = ?1", existing.integer(0)));
    }

    auto insert = RIG_TRY(
        Statement::prepare(db, "INSERT INTO samples (run_id, " + column_list<core::Sample>() +
                                   ") VALUES (?1, " + placeholders<core::Sample>(2) + ")"));
    insert.bind(run_id);
    bind_fields(insert, 2, sample);
    RIG_TRY(insert.run());
    const int64_t sample_id = sqlite3_last_insert_rowid(db.m_db);

    auto line = RIG_TRY(Statement::prepare(
        db, "INSERT INTO error_lines (sample_id, " + column_list<core::ErrorLine>() +
                ") VALUES (?1, " + placeholders<core::ErrorLine>(2) + ")"));
    for (const auto& error_line : sample.lines) {
        line.reset();
        line.bind(sample_id);
        bind_fields(line, 2, error_line);
        RIG_TRY(line.run());
    }
    auto metric = RIG_TRY(
        Statement::prepare(db, "INSERT INTO metrics (sample_id, " + column_list<core::Metric>() +
                                   ") VALUES (?1, " + placeholders<core::Metric>(2) + ")"));
    for (const auto& m : sample.metrics) {
        metric.reset();
        metric.bind(sample_id);
        bind_fields(metric, 2, m);
        RIG_TRY(metric.run());
    }

    aggregates.add(run_id, sample);
    RIG_TRY(aggregates.flush(db));

    RIG_TRY(transaction.commit());
    return sample_id;
}

Expected<std::optional<ReferenceOutputs>> Database::reference_outputs(int64_t run_id,
                                                                      const std::string& cell_id) {
    Impl& db = *m_impl;
    auto select = RIG_TRY(Statement::prepare(
        db, "SELECT repetition, outcome, outputs FROM samples WHERE run_id = ?1 AND cell_id = "
            "?2 AND outputs != '' ORDER BY id"));
    select.bind(run_id, cell_id);
    while (RIG_TRY(select.step())) {
        auto outcome = core::parse_outcome(select.text(1));
        if (!outcome || !core::measured(*outcome) || *outcome == core::Outcome::wrong_output)
            continue;
        return ReferenceOutputs{cell_id, static_cast<int>(select.integer(0)), select.text(2)};
    }
    return std::nullopt;
}

Expected<std::vector<core::Sample>> Database::samples(int64_t run_id) {
    Impl& db = *m_impl;
    // One snapshot, so that a sample written meanwhile cannot appear without its lines.
    auto transaction = RIG_TRY(Transaction::begin(db, Transaction::Mode::read));

    std::vector<core::Sample> out;
    std::unordered_map<int64_t, size_t> index_of;
    auto select =
        RIG_TRY(Statement::prepare(db, "SELECT id, " + column_list<core::Sample>() +
                                           " FROM samples WHERE run_id = ?1 ORDER BY id"));
    select.bind(run_id);
    while (RIG_TRY(select.step())) {
        core::Sample& sample = out.emplace_back();
        sample.id = select.integer(0);
        RIG_TRY(read_fields(db, "sample " + std::to_string(sample.id), select, 1, sample));
        index_of[sample.id] = out.size() - 1;
    }

    auto lines = RIG_TRY(Statement::prepare(
        db, "SELECT l.sample_id, " + column_list<core::ErrorLine>("l.") +
                " FROM error_lines l JOIN samples s ON s.id = l.sample_id WHERE s.run_id = ?1 "
                "ORDER BY l.id"));
    lines.bind(run_id);
    while (RIG_TRY(lines.step()))
        RIG_TRY(read_fields(db, "error lines", lines, 1,
                            out[index_of.at(lines.integer(0))].lines.emplace_back()));

    auto metrics = RIG_TRY(Statement::prepare(
        db, "SELECT m.sample_id, " + column_list<core::Metric>("m.") +
                " FROM metrics m JOIN samples s ON s.id = m.sample_id WHERE s.run_id = ?1 "
                "ORDER BY m.id"));
    metrics.bind(run_id);
    while (RIG_TRY(metrics.step()))
        RIG_TRY(read_fields(db, "metrics", metrics, 1,
                            out[index_of.at(metrics.integer(0))].metrics.emplace_back()));

    RIG_TRY(transaction.commit());
    return out;
}

Expected<void> sample_rows(Impl& db, const std::function<void(const SampleRow&)>& visit) {
    // One row per metric, and one for a sample without any. SQLite runs a LEFT JOIN's left
    // table as the outer loop, so a sample's rows arrive together.
    std::string columns;
    for (const std::string& name : k_aggregated_columns)
        columns += "s.\"" + name + "\", ";
    auto select = RIG_TRY(Statement::prepare(
        db, "SELECT s.id, s.run_id, " + columns + column_list<core::Metric>("m.") +
                " FROM samples s LEFT JOIN metrics m ON m.sample_id = s.id ORDER BY s.id"));
    // Each field's column in the select, or -1 for the fields the aggregates do not take;
    // found once, not once per sample.
    constexpr int k_first = 2;
    std::vector<int> column_of;
    for (const std::string& name : column_names<core::Sample>()) {
        auto it = std::find(k_aggregated_columns.begin(), k_aggregated_columns.end(), name);
        column_of.push_back(it == k_aggregated_columns.end()
                                ? -1
                                : k_first + static_cast<int>(it - k_aggregated_columns.begin()));
    }
    const int first_metric = k_first + static_cast<int>(k_aggregated_columns.size());
    SampleRow facts;
    std::optional<int64_t> sample_id;
    while (RIG_TRY(select.step())) {
        const int64_t id = select.integer(0);
        if (id != sample_id) {
            if (sample_id)
                visit(facts);
            sample_id = id;
            facts.run_id = select.integer(1);
            size_t field = 0;
            std::optional<int> unknown;
            visit_columns(static_cast<core::Sample&>(facts), [&](const char*, auto& member) {
                const int column = column_of[field++];
                if (column >= 0 && !read_column(select, column, member) && !unknown)
                    unknown = column;
            });
            if (unknown)
                return tl::unexpected(unknown_word(
                    db, "samples of run " + std::to_string(facts.run_id), select, *unknown));
            facts.metrics.clear();
        }
        if (sqlite3_column_type(select.handle(), first_metric) != SQLITE_NULL)
            RIG_TRY(read_fields(db, "metrics", select, first_metric, facts.metrics.emplace_back()));
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
        *m_impl, "SELECT o.run_id, c.kernel_name, a.package, a.package_version, "
                 "sum(o.samples) FROM cell_outcomes o JOIN cells c USING (run_id, cell_id) "
                 "JOIN kernel_artifacts a ON a.cache_key = o.kernel_artifact "
                 "WHERE o.run_id IN (SELECT value FROM json_each(?1)) AND a.package <> '' "
                 "GROUP BY o.run_id, c.kernel_name, a.package, a.package_version "
                 "ORDER BY o.run_id, c.kernel_name, a.package, a.package_version"));
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

Expected<std::vector<FailureCount>>
Database::unexplained_failures(const std::vector<int64_t>& run_ids) {
    // The columns after min(repetition) are SQLite's bare columns: they come from the
    // row that holds the minimum, the cell's first such sample.
    auto select = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT run_id, cell_id, outcome, count(*), min(repetition), error_count, "
                 "       evidence "
                 "FROM samples "
                 "WHERE run_id IN (SELECT value FROM json_each(?1)) AND outcome NOT IN (?2, ?3) "
                 "  AND (error_count = 0 OR outcome = ?4) "
                 "GROUP BY run_id, cell_id, outcome ORDER BY run_id, cell_id, min(id)"));
    select.bind(id_array(run_ids), core::to_string(core::Outcome::ok),
                core::to_string(core::Outcome::aborted),
                core::to_string(core::Outcome::infra_error));
    std::vector<FailureCount> out;
    while (RIG_TRY(select.step())) {
        FailureCount& count = out.emplace_back();
        count.run_id = select.integer(0);
        count.first.cell_id = select.text(1);
        count.first.outcome =
            core::parse_outcome(select.text(2)).value_or(core::Outcome::infra_error);
        count.samples = select.integer(3);
        count.first.repetition = static_cast<int>(select.integer(4));
        count.first.error_count = static_cast<int>(select.integer(5));
        count.first.evidence = select.text(6);
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

} // namespace rig::store
