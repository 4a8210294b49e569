// SPDX-License-Identifier: MIT
// The per-cell aggregates (cell_outcomes, cell_values): what each stored sample adds to its
// cell, written with the sample, and filled once from the samples a database already held.
#pragma once

#include "store/sqlite.hpp"

#include <map>
#include <string>
#include <tuple>

namespace rig::store {

// What the per-cell aggregates take of one sample, without its lines and evidence: of the
// sample's fields, cell_id, outcome, kernel_artifact, guest_seconds, wall_seconds,
// host_cpu_percent, error_count, warning_count, msize_negotiated, cache_negotiated and the
// metrics (sorted by name) are read; the others keep their defaults.
struct SampleRow : core::Sample {
    int64_t run_id = 0;
};

// Contributions gathered in memory and written as one upsert per aggregate row, so that
// filling a million samples' aggregates writes each distinct row once.
class AggregateWriter final {
public:
    // What `sample` of `run_id` adds to its cell (sign 1), or takes away (sign -1, a
    // replaced sample).
    void add(int64_t run_id, const core::Sample& sample, int sign = 1);
    size_t pending() const { return m_outcomes.size() + m_values.size(); }
    // Writes what was gathered and forgets it; inside the caller's transaction.
    Expected<void> flush(Impl& db);

private:
    struct Sums {
        int64_t samples = 0;
        int64_t errors = 0;
        int64_t warnings = 0;
        int64_t with_errors = 0;
    };
    // run, cell, outcome, msize (0: none), cache, kernel artifact
    using OutcomeKey =
        std::tuple<int64_t, std::string, std::string, int64_t, std::string, std::string>;
    // run, figure, name, cell, value
    using ValueKey = std::tuple<int64_t, std::string, std::string, std::string, double>;
    struct Count {
        std::string unit;
        int64_t count = 0;
    };
    std::map<OutcomeKey, Sums> m_outcomes;
    std::map<ValueKey, Count> m_values;
};

// The migration to k_cell_aggregates_version: every stored sample's contribution.
Expected<void> fill_aggregates(Impl& db);

// Every stored sample with the columns the aggregates take and its metrics, one sample at a
// time (samples.cpp).
Expected<void> sample_rows(Impl& db, const std::function<void(const SampleRow&)>& visit);

} // namespace rig::store
