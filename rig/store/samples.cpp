// SPDX-License-Identifier: MIT
// Samples with their error lines and metrics, and the columns reports read of them.
#include "store/sqlite.hpp"
#include "util/json.hpp"

#include <algorithm>
#include <unordered_map>

namespace rig::store {

namespace {

// The columns a report reads of each sample (SampleRow), in the order of the covering
// index samples_for_reports; each is a field of core::Sample's list.
const std::vector<std::string> k_report_columns = {
    "cell_id",     "outcome",       "guest_seconds",    "wall_seconds",    "host_cpu_percent",
    "error_count", "warning_count", "msize_negotiated", "cache_negotiated"};

} // namespace

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

namespace {

// Run ids as a JSON array, so that one bound parameter serves any number of runs through
// json_each() and the statement text never depends on the input.
std::string id_array(const std::vector<int64_t>& ids) {
    return util::json_line(util::Json(ids));
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
    if (prefixes.empty()) {
        std::string nulls;
        for (size_t i = 0; i < column_names<core::Metric>().size(); ++i)
            nulls += i ? ", NULL" : "NULL";
        return nulls + " FROM samples s";
    }
    const std::string columns = column_list<core::Metric>("m.") + " FROM samples s ";
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
                                      const std::function<void(const SampleRow&)>& visit) {
    // One row per metric, and one for a sample without any. SQLite runs a LEFT JOIN's left
    // table as the outer loop, so a sample's rows arrive together; both sides are read
    // from covering indexes (samples_for_reports, metrics_for_reports).
    const auto prefixes = distinct_prefixes(metric_prefixes);
    std::string report_columns;
    for (const std::string& name : k_report_columns)
        report_columns += "s.\"" + name + "\", ";
    auto select = RIG_TRY(Statement::prepare(*m_impl, "SELECT s.id, s.run_id, " + report_columns +
                                                          metrics_join(prefixes) +
                                                          " WHERE s.run_id IN (SELECT value "
                                                          "FROM json_each(?1))"));
    select.bind(id_array(run_ids));
    if (!prefixes.empty() && !prefixes.front().empty())
        for (size_t i = 0; i < prefixes.size(); ++i)
            select.bind_at(static_cast<int>(i + 2), prefixes[i]);
    // Each field's column in the select, or -1 for the fields a report does not read;
    // found once, not once per sample.
    constexpr int k_first = 2;
    std::vector<int> column_of;
    for (const std::string& name : column_names<core::Sample>()) {
        auto it = std::find(k_report_columns.begin(), k_report_columns.end(), name);
        column_of.push_back(it == k_report_columns.end()
                                ? -1
                                : k_first + static_cast<int>(it - k_report_columns.begin()));
    }
    const int first_metric = k_first + static_cast<int>(k_report_columns.size());
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
                return tl::unexpected(m_impl->error(
                    "samples of run " + std::to_string(facts.run_id),
                    "unknown " + std::string(sqlite3_column_name(select.handle(), *unknown)) +
                        " '" + select.text(*unknown) + "'"));
            facts.metrics.clear();
        }
        if (sqlite3_column_type(select.handle(), first_metric) != SQLITE_NULL)
            RIG_TRY(read_fields(*m_impl, "metrics", select, first_metric,
                                facts.metrics.emplace_back()));
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
