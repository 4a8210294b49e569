// SPDX-License-Identifier: MIT
// Samples with their error lines and metrics, and the columns reports read of them.
#include "store/sqlite.hpp"
#include "util/json.hpp"

#include <algorithm>
#include <unordered_map>

namespace rig::store {

namespace {

std::string_view to_string(core::Severity severity) {
    return severity == core::Severity::warning ? "warning" : "error";
}

const char* const k_sample_columns =
    "cell_id, repetition, outcome, accel, kernel_artifact, guest_seconds, wall_seconds, "
    "total_seconds, qemu_cpu_seconds, helper_cpu_seconds, host_cpu_seconds, host_cpu_percent, "
    "mount_requested, mount_negotiated, msize_negotiated, cache_negotiated, exit_status, "
    "error_count, warning_count, evidence, started_at, cpus";

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
    sample.cpus = row.text(22);
    return sample;
}

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

    RIG_TRY(execute(db,
                    std::string("INSERT INTO samples (run_id, ") + k_sample_columns +
                        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                        "?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
                    run_id, sample.cell_id, sample.repetition, core::to_string(sample.outcome),
                    sample.accel, sample.kernel_artifact, sample.guest_seconds, sample.wall_seconds,
                    sample.total_seconds, sample.qemu_cpu_seconds, sample.helper_cpu_seconds,
                    sample.host_cpu_seconds, sample.host_cpu_percent, sample.mount_requested,
                    sample.mount_negotiated, sample.msize_negotiated, sample.cache_negotiated,
                    sample.exit_status, sample.error_count, sample.warning_count, sample.evidence,
                    sample.started_at, sample.cpus));
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
                                      const std::function<void(const SampleRow&)>& visit) {
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
    SampleRow facts;
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

} // namespace rig::store
