// SPDX-License-Identifier: MIT
// What a report shows, independent of format: the selected runs, one result per cell of
// each run with its samples summarized, and error signatures grouped across cells.
#pragma once

#include "core/cell.hpp"
#include "core/sample.hpp"
#include "core/stats.hpp"
#include "core/status.hpp"
#include "store/store.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::report {

struct RunHeader {
    int64_t id = 0;
    std::string scenario;
    std::string started_at;
    core::RunStatus status = core::RunStatus::running;
};

// Which of the samples' metrics a report reads. Reading takes time in proportion to the
// metric rows read: a table reads only the metrics it shows.
enum class MetricsRead {
    none,  // the error views
    table, // the 9p counters of the share under test, or the metrics --metric chose
    all,   // CSV, JSON and HTML, which carry every metric
};

// One metric of one cell: its values in the measured samples that carry it. A sample
// without the metric adds nothing, so a cell none of whose samples has it has no entry:
// unknown, never zero.
struct MetricValues {
    std::string unit;
    core::Distribution values;
    core::Summary summary; // of values, by finish()
};

// One cell of one run. Durations, CPU and metrics come from "measured" samples only: ok,
// and errors (the compile finished, as the 9p cache/msize table's "several errors
// (compilation completed)").
struct CellResult {
    int64_t run_id = 0;
    core::Cell cell;
    size_t samples = 0;
    std::map<std::string, int> outcomes; // outcome name -> samples
    core::Distribution durations;        // guest seconds
    core::Distribution cpu_percent;      // host CPU over the workload window
    int errors = 0;
    int warnings = 0;
    int samples_with_errors = 0;
    std::optional<uint64_t> msize_negotiated; // set when it differs from the requested
    std::string cache_negotiated;             // set when it differs from the requested
    core::Summary duration;                   // of durations, by finish()
    core::Summary cpu;                        // of cpu_percent, by finish()
    std::map<std::string, MetricValues, std::less<>> metrics; // by name
    // Why samples were not ok when no error line says it (core::outcome_text), distinct,
    // at most three: from samples that carry their evidence (`rig run`'s own table), or
    // from the failures a report loads with the error lines.
    std::vector<std::string> why;
};

// Adds the sample's core::outcome_text to the cell's `why` when it says why.
void note_why(CellResult& result, const core::Sample& sample);

// A sample's contribution to its cell (core::figure_values), for samples in memory.
void tally_sample(CellResult& result, const core::Sample& sample);
// The same contributions as a results database keeps them per cell: `count` samples of one
// outcome, or of one value of a figure.
void tally_outcomes(CellResult& result, const store::OutcomeTally& tally);
void tally_figure(CellResult& result, core::Figure figure, std::string_view name,
                  std::string_view unit, double value, size_t count);
// Summarizes durations, CPU figures and metric values.
void finish(CellResult& result);

// The cell's values of a metric; nullptr when no measured sample of it has the metric.
const MetricValues* find_metric(const CellResult& result, std::string_view name);

// The first occurrence of a signature in one cell, with the lines around it.
struct Occurrence {
    size_t cell = 0;     // index into ReportData::cells
    int64_t lines = 0;   // lines with this signature in the cell
    int64_t samples = 0; // samples of the cell that printed it
    int repetition = 0;
    std::string source; // console, dmesg, workload
    std::string line;
    std::string excerpt; // a few lines of log around it; the line alone when no log has it
};

struct SignatureGroup {
    core::Severity severity = core::Severity::error;
    std::string signature;
    int64_t lines = 0;
    int64_t samples = 0;
    std::vector<Occurrence> cells; // in cell order
};

// The samples of a cell that failed one way with no error line to say why (the errors
// view lists them after the signatures).
struct Failure {
    size_t cell = 0; // index into ReportData::cells
    core::Outcome outcome = core::Outcome::infra_error;
    int64_t samples = 0;
    int repetition = 0;                   // the first of them
    std::string why;                      // core::why_not_ok of the first
    std::vector<std::string> last_output; // its last lines (core::last_output)
};

struct ReportData {
    std::vector<RunHeader> runs;
    // What each Debian kernel resolved to, by run: a series name names no one package.
    std::vector<store::KernelPackage> kernel_packages;
    std::vector<CellResult> cells;          // in run order, then the scenario's cell order
    std::vector<SignatureGroup> signatures; // errors first, then by lines, most first
    std::vector<Failure> failures;          // loaded with the signatures, in cell order
};

// The table `rig run` prints: one run's cells and their samples.
ReportData from_samples(const std::vector<core::Cell>& cells,
                        const std::vector<core::Sample>& samples);

// Keys by which rows are filtered, paired and pivoted: run, cell, kernel, config, and
// every axis of the cells' params (fs, msize, cache, ...).
std::string key_value(const CellResult& result, const std::string& key);
std::vector<std::string> known_keys(const std::vector<CellResult>& cells);

// The few lines of `log` around the first line containing `line`; "" if none does.
std::string excerpt_around(const std::string& log, const std::string& line);

} // namespace rig::report
