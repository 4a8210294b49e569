// SPDX-License-Identifier: MIT
// What one repetition of a cell produced: outcome class, timings, CPU, mounts, evidence.
#pragma once

#include "core/status.hpp"
#include "util/error.hpp"
#include "util/fields.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

// A panic, a hang or a failed compile is data, never an Error: each is an outcome.
enum class Outcome {
    ok,
    errors,          // the workload exited 0 but error lines were seen
    workload_failed, // non-zero exit status
    kernel_panic,
    boot_timeout,
    workload_timeout,
    console_silence, // nothing on console or channel for timeouts.silence
    infra_error,     // QEMU would not start, virtiofsd died, ...
    aborted,         // rig was interrupted while the sample ran
    build_failed,    // the cell's git kernel, or a module workload against it, did not compile
    time_limit,      // a batch job's time limit (slurm.time) ended the sample before its own
                     // timeouts did: a hang, as far as the job can tell
    disk_quota,      // the workload filled its share's cap (guest.share_limit): guest stopped
    // The workload ended, but what it produced is not what it should be: the guest's view
    // of its outputs differs from the share's on the host, or known content written on one
    // side read back changed on the other (run/outputs.hpp). Nothing need have erred.
    wrong_output,
};

std::string_view to_string(Outcome outcome);
// Whether the workload ran to its end: ok, errors (the compile finished with error lines,
// as seed 004's "several errors (compilation completed)") or wrong-output. Durations and
// metrics count only such samples: a workload stopped part way would mix its counts with
// whole ones.
bool measured(Outcome outcome);
std::optional<Outcome> parse_outcome(std::string_view text);

enum class Severity { warning, error };

std::string_view to_string(Severity severity);
std::optional<Severity> parse_severity(std::string_view text);

struct ErrorLine {
    Severity severity = Severity::error;
    std::string source;    // console, dmesg, workload
    std::string line;      // as printed
    std::string signature; // addresses, numbers, pids and timestamps stripped

    bool operator==(const ErrorLine&) const = default;
};

struct Metric {
    std::string name;
    double value = 0;
    std::string unit;

    bool operator==(const Metric&) const = default;
};

struct Sample {
    int64_t id = 0;
    std::string cell_id;
    int repetition = 0; // 0-based; warmups are not stored as samples
    Outcome outcome = Outcome::infra_error;
    std::string accel; // kvm or tcg
    // q35 or microvm (core::Machine): the workload's times differ between them, its counts
    // do not. '' where no guest was described (a kernel that did not build).
    std::string machine;
    std::string cpus; // the host CPUs it ran on under --jobs ("2-3"); empty: unpinned
    std::string kernel_artifact;
    double guest_seconds = 0; // workload time measured by the guest
    double wall_seconds = 0;  // host wall time of the workload phase
    double total_seconds = 0; // host wall time of the whole sample, boot to exit
    double qemu_cpu_seconds = 0;
    double helper_cpu_seconds = 0; // virtiofsd and other helpers
    double host_cpu_seconds = 0;   // whole host, busy time over the workload window
    double host_cpu_percent =
        0; // of the host's total capacity, as Schoenebeck's 9p cache/msize table reports
    std::string mount_requested;  // options rig asked for
    std::string mount_negotiated; // as /proc/mounts printed them
    std::optional<uint64_t> msize_negotiated;
    std::string cache_negotiated;
    int exit_status = -1;
    int error_count = 0;
    int warning_count = 0;
    std::string evidence;   // log excerpt that explains the outcome
    std::string started_at; // ISO 8601 UTC
    // The workload's outputs as the guest saw them (sha256sum's lines, run/outputs.hpp),
    // whole; empty when none were hashed. Later samples of the cell and its twins are held
    // against it.
    std::string outputs;
    std::vector<ErrorLine> lines;
    std::vector<Metric> metrics;

    // Every field: what a round trip through a codec must keep.
    bool operator==(const Sample&) const = default;
};

// "s" for a duration, "%" for CPU; a metric carries its own.
std::string_view unit_of(Figure figure);

struct FigureValue {
    Figure figure = Figure::duration;
    std::string_view name; // the metric's; empty for duration and cpu
    std::string_view unit;
    double value = 0;
};

// What one sample adds to its cell's figures, the one rule a results database's per-cell
// aggregates and a report of samples in memory both follow: nothing unless measured(); a
// duration only when the guest timed the workload, a CPU figure only when the host did.
// The views point into `sample`.
std::vector<FigureValue> figure_values(const Sample& sample);

// Each record's fields, declared once (util/fields.hpp): the database's columns of the
// same names (store/), the worker's record (run/worker) and the report's reads follow these
// lists, so that a field added to a record is one line here, plus a schema migration for
// its column. Sample::id, the database's row id, is not a field.
template <util::RecordOf<ErrorLine> Line, class Visit> void fields(Line& line, Visit&& visit) {
    visit("severity", line.severity);
    visit("source", line.source);
    visit("line", line.line);
    visit("signature", line.signature);
}

template <util::RecordOf<Metric> M, class Visit> void fields(M& metric, Visit&& visit) {
    visit("name", metric.name);
    visit("value", metric.value);
    visit("unit", metric.unit);
}

// lines and metrics are the sample's child records: tables of their own in the database.
template <util::RecordOf<Sample> S, class Visit> void fields(S& sample, Visit&& visit) {
    visit("cell_id", sample.cell_id);
    visit("repetition", sample.repetition);
    visit("outcome", sample.outcome);
    visit("accel", sample.accel);
    visit("machine", sample.machine);
    visit("cpus", sample.cpus);
    visit("kernel_artifact", sample.kernel_artifact);
    visit("guest_seconds", sample.guest_seconds);
    visit("wall_seconds", sample.wall_seconds);
    visit("total_seconds", sample.total_seconds);
    visit("qemu_cpu_seconds", sample.qemu_cpu_seconds);
    visit("helper_cpu_seconds", sample.helper_cpu_seconds);
    visit("host_cpu_seconds", sample.host_cpu_seconds);
    visit("host_cpu_percent", sample.host_cpu_percent);
    visit("mount_requested", sample.mount_requested);
    visit("mount_negotiated", sample.mount_negotiated);
    visit("msize_negotiated", sample.msize_negotiated);
    visit("cache_negotiated", sample.cache_negotiated);
    visit("exit_status", sample.exit_status);
    visit("error_count", sample.error_count);
    visit("warning_count", sample.warning_count);
    visit("evidence", sample.evidence);
    visit("started_at", sample.started_at);
    visit("outputs", sample.outputs);
    visit("lines", sample.lines);
    visit("metrics", sample.metrics);
}

// The sample as one JSON object, every field of the list under its name; decode is its
// inverse, and reads an object that lacks a field as the field's default.
std::string encode(const Sample& sample);
// Text that is not such an object is an infra error naming `what`.
Expected<Sample> decode_sample(std::string_view json, const std::string& what);

// The value of the sample's metric `name`; nullopt when the sample lacks it, which is
// "unknown", never 0.
std::optional<double> metric_value(const Sample& sample, std::string_view name);

// Why a sample that is not ok is so, in one line of at most 160 printable characters,
// from its stored evidence: an infra error's reason (its first line), else the last line
// the workload (or the console) printed, which says what stopped it when no error line
// did. "" for an ok or aborted sample, and for one whose error lines say why (`rig report
// --errors` shows those).
std::string why_not_ok(const Sample& sample);
// The last `most` lines of the sample's evidence that say something, shown safely as
// why_not_ok shows one: what `rig report --errors` prints of a failure without error lines.
std::vector<std::string> last_output(const Sample& sample, size_t most);
// The outcome as the progress lines name it: "ok", "workload-failed (last output: ...)".
std::string outcome_text(const Sample& sample);

} // namespace rig::core
