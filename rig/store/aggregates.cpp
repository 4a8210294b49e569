// SPDX-License-Identifier: MIT
// Per-cell aggregates: written with each sample, filled by the migration, read by reports.
#include "store/aggregates.hpp"

#include <algorithm>

namespace rig::store {

namespace {

// Enough rows in memory to fill a large database in few passes, few enough to stay small.
constexpr size_t k_fill_batch = size_t{1} << 20;

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

} // namespace

void AggregateWriter::add(int64_t run_id, const core::Sample& sample, int sign) {
    const int64_t msize =
        sample.msize_negotiated ? static_cast<int64_t>(*sample.msize_negotiated) : 0;
    Sums& sums = m_outcomes[{run_id, sample.cell_id, std::string(core::to_string(sample.outcome)),
                             msize, sample.cache_negotiated, sample.kernel_artifact}];
    sums.samples += sign;
    sums.errors += sign * sample.error_count;
    sums.warnings += sign * sample.warning_count;
    sums.with_errors += sign * (sample.error_count > 0 ? 1 : 0);
    for (const core::FigureValue& value : core::figure_values(sample)) {
        auto [it, added] =
            m_values.try_emplace({run_id, std::string(core::to_string(value.figure)),
                                  std::string(value.name), sample.cell_id, value.value});
        if (added)
            it->second.unit = value.unit;
        it->second.count += sign;
    }
}

Expected<void> AggregateWriter::flush(Impl& db) {
    // Sums add up; a row whose samples or count fall to none goes (a replaced sample).
    auto outcome = RIG_TRY(Statement::prepare(
        db, "INSERT INTO cell_outcomes (run_id, cell_id, outcome, msize_negotiated, "
            "cache_negotiated, kernel_artifact, samples, error_count, warning_count, "
            "with_errors) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
            "ON CONFLICT DO UPDATE SET samples = samples + excluded.samples, "
            "error_count = error_count + excluded.error_count, "
            "warning_count = warning_count + excluded.warning_count, "
            "with_errors = with_errors + excluded.with_errors"));
    for (const auto& [key, sums] : m_outcomes) {
        const auto& [run, cell, word, msize, cache, artifact] = key;
        outcome.reset();
        RIG_TRY(outcome
                    .bind(run, cell, word, msize, cache, artifact, sums.samples, sums.errors,
                          sums.warnings, sums.with_errors)
                    .run());
    }
    auto value = RIG_TRY(Statement::prepare(
        db, "INSERT INTO cell_values (run_id, figure, name, cell_id, value, unit, count) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
            "ON CONFLICT DO UPDATE SET count = count + excluded.count"));
    for (const auto& [key, count] : m_values) {
        const auto& [run, figure, name, cell, number] = key;
        value.reset();
        RIG_TRY(value.bind(run, figure, name, cell, number, count.unit, count.count).run());
    }
    if (!m_outcomes.empty())
        RIG_TRY(execute(db, "DELETE FROM cell_outcomes WHERE samples <= 0"));
    if (!m_values.empty())
        RIG_TRY(execute(db, "DELETE FROM cell_values WHERE count <= 0"));
    m_outcomes.clear();
    m_values.clear();
    return {};
}

Expected<void> fill_aggregates(Impl& db) {
    AggregateWriter writer;
    Expected<void> written;
    RIG_TRY(sample_rows(db, [&](const SampleRow& row) {
        writer.add(row.run_id, row);
        if (written && writer.pending() >= k_fill_batch)
            written = writer.flush(db);
    }));
    RIG_TRY(written);
    return writer.flush(db);
}

namespace {

// A word column of an aggregate row; text none of the enum's words is an error.
template <class E>
Expected<void> read_word(Impl& db, const char* table, const Statement& row, int column, E& out) {
    if (parse_word(row.text(column), out))
        return {};
    return tl::unexpected(unknown_word(db, table, row, column));
}

} // namespace

Expected<void> Database::outcome_tallies(const std::vector<int64_t>& run_ids,
                                         const std::function<void(const OutcomeTally&)>& visit) {
    auto select = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT run_id, cell_id, outcome, msize_negotiated, cache_negotiated, samples, "
                 "error_count, warning_count, with_errors FROM cell_outcomes "
                 "WHERE run_id IN (SELECT value FROM json_each(?1))"));
    select.bind(id_array(run_ids));
    OutcomeTally tally;
    while (RIG_TRY(select.step())) {
        tally.run_id = select.integer(0);
        tally.cell_id = select.text(1);
        RIG_TRY(read_word(*m_impl, "cell_outcomes", select, 2, tally.outcome));
        const int64_t msize = select.integer(3);
        tally.msize_negotiated =
            msize > 0 ? std::optional<uint64_t>(static_cast<uint64_t>(msize)) : std::nullopt;
        tally.cache_negotiated = select.text(4);
        tally.samples = select.integer(5);
        tally.errors = select.integer(6);
        tally.warnings = select.integer(7);
        tally.with_errors = select.integer(8);
        visit(tally);
    }
    return {};
}

Expected<void> Database::figure_counts(const std::vector<int64_t>& run_ids,
                                       const FigureSelection& selection,
                                       const std::function<void(const FigureCount&)>& visit) {
    // One range of the primary key per run and figure (and cell), read three columns a
    // row: a million distinct durations make a million rows, and each column read costs.
    const bool one_cell = !selection.cell_id.empty();
    auto values = RIG_TRY(Statement::prepare(
        *m_impl, std::string("SELECT cell_id, value, count FROM cell_values WHERE run_id = ?1 "
                             "AND figure = ?2 AND name = ?3") +
                     (one_cell ? " AND cell_id = ?4" : "")));
    auto names = RIG_TRY(Statement::prepare(
        *m_impl, "SELECT DISTINCT name, unit FROM cell_values WHERE run_id = ?1 AND figure = ?2 "
                 "AND name >= ?3 AND name < ?3 || char(1114111)"));
    FigureCount row;
    auto read = [&]() -> Expected<void> {
        values.reset();
        values.bind(row.run_id, row.figure, row.name);
        if (one_cell)
            values.bind_at(4, selection.cell_id);
        while (RIG_TRY(values.step())) {
            const auto* cell = sqlite3_column_text(values.handle(), 0);
            const std::string_view cell_id(
                reinterpret_cast<const char*>(cell),
                static_cast<size_t>(sqlite3_column_bytes(values.handle(), 0)));
            if (cell_id != row.cell_id)
                row.cell_id = cell_id;
            row.value = values.real(1);
            row.count = values.integer(2);
            visit(row);
        }
        return {};
    };
    for (int64_t run : run_ids) {
        row.run_id = run;
        row.name.clear();
        for (core::Figure figure : selection.timed) {
            row.figure = figure;
            row.unit = core::unit_of(figure);
            RIG_TRY(read());
        }
        row.figure = core::Figure::metric;
        for (const std::string& prefix : distinct_prefixes(selection.metric_prefixes)) {
            // A name with a unit each: the units of one metric's samples agree.
            std::vector<std::pair<std::string, std::string>> found;
            names.reset();
            names.bind(run, core::Figure::metric, prefix);
            while (RIG_TRY(names.step()))
                if (found.empty() || found.back().first != names.text(0))
                    found.emplace_back(names.text(0), names.text(1));
            for (auto& [name, unit] : found) {
                row.name = std::move(name);
                row.unit = std::move(unit);
                RIG_TRY(read());
            }
        }
    }
    return {};
}

} // namespace rig::store
