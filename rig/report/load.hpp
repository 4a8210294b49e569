// SPDX-License-Identifier: MIT
// Reading a report's data from the results database: which runs and cells, their samples
// summarized, and error signatures with their first occurrence and log excerpt.
#pragma once

#include "report/data.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rig::report {

enum class Signatures { skip, load };

struct Selection {
    std::vector<int64_t> runs;      // empty: the newest run
    std::vector<std::string> cells; // --cell filters (core::cell_matches), any; empty: all
    std::vector<std::pair<std::string, std::string>> where; // key=value; a key given twice
                                                            // matches either value
    Signatures signatures = Signatures::skip;
    // Where `rig run` kept the database's runs (core::results_folder; the logs are
    // RUN/CELL/REP/console.log there), for excerpts; the stored evidence is used first, and
    // "" skips the files.
    std::filesystem::path runs_dir;
    MetricsRead metrics = MetricsRead::all;
    // --metric: a table reads only these, and a name no sample of the runs has is a usage
    // error.
    std::vector<std::string> chosen_metrics;
};

// A usage error names the unknown run, key, cell or metric, or says that nothing matched.
Expected<ReportData> load(store::Database& db, const Selection& selection);

} // namespace rig::report
