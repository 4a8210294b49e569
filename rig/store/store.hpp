// SPDX-License-Identifier: MIT
// The results database: runs, cells, samples and their evidence, kernel builds, bisects.
// The only folder that includes sqlite3.h.
#pragma once

#include "core/cell.hpp"
#include "core/cell_record.hpp"
#include "core/sample.hpp"
#include "core/scenario.hpp"
#include "core/status.hpp"
#include "util/error.hpp"
#include "util/fields.hpp"
#include "util/lock.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rig::store {

struct RunInfo {
    int64_t id = 0;
    std::string scenario_name;
    std::string scenario_file;
    std::string scenario_text;
    std::string scenario_hash;
    std::string host_facts; // JSON text: cpus, memory, kernel, qemu version, accel
    std::string rig_version;
    std::string started_at;  // ISO 8601 UTC
    std::string finished_at; // empty while the run is open or was killed
    core::RunStatus status = core::RunStatus::running;
    // What the command line chose over the scenario, for a resume to choose again:
    std::optional<core::Backend> backend; // --backend; none: the scenario's
    std::vector<std::string> uris;        // --uri (libvirt); empty: the scenario's
    int jobs = 0;                         // --jobs; 0: the scenario's
};

// A kernel image rig built or fetched, keyed by everything that determines its bytes.
struct KernelArtifact {
    int64_t id = 0;
    std::string cache_key; // unique: the artifact cache's key
    core::KernelSource source = core::KernelSource::debian;
    std::string name;            // the scenario's kernel name when first stored
    std::string release;         // uname -r
    std::string package;         // debian
    std::string package_version; // debian
    std::string commit;          // git
    std::string config_hash;     // git: sha256 of the final .config
    std::string compiler;        // git: `gcc --version` first line
    std::string image_sha256;
    std::string image_path;
    std::string modules_path; // "" when the kernel has no modules
    std::string created_at;   // ISO 8601 UTC; "" = now
};

// The columns of kernel_artifacts, declared once (util/fields.hpp); id is the row's.
template <util::RecordOf<KernelArtifact> A, class Visit> void fields(A& artifact, Visit&& visit) {
    visit("cache_key", artifact.cache_key);
    visit("source", artifact.source);
    visit("name", artifact.name);
    visit("release", artifact.release);
    visit("package", artifact.package);
    visit("package_version", artifact.package_version);
    visit("commit", artifact.commit);
    visit("config_hash", artifact.config_hash);
    visit("compiler", artifact.compiler);
    visit("image_sha256", artifact.image_sha256);
    visit("image_path", artifact.image_path);
    visit("modules_path", artifact.modules_path);
    visit("created_at", artifact.created_at);
}

// The samples of one cell of one run that ended with one outcome and negotiated one msize
// and cache mode, counted and their error lines summed: the database keeps these as each
// sample is stored, so that a report reads a row per cell and outcome, not per sample.
// A sample's outputs as the guest saw them (core::Sample::outputs), and which sample it was.
struct ReferenceOutputs {
    std::string cell_id;
    int repetition = 0;
    std::string outputs;
};

struct OutcomeTally {
    int64_t run_id = 0;
    std::string cell_id;
    core::Outcome outcome = core::Outcome::ok;
    std::optional<uint64_t> msize_negotiated;
    std::string cache_negotiated;
    int64_t samples = 0;
    int64_t errors = 0;      // error lines
    int64_t warnings = 0;    // warning lines
    int64_t with_errors = 0; // samples with at least one error line
};

// One distinct value of one figure (core::figure_values) in one cell of one run, and how
// many of its measured samples had it. A cell's values of a figure arrive together and in
// ascending order.
struct FigureCount {
    int64_t run_id = 0;
    std::string cell_id;
    core::Figure figure = core::Figure::duration;
    std::string name; // the metric's; empty for duration and cpu
    std::string unit;
    double value = 0;
    int64_t count = 0;
};

// Which figures Database::figure_counts reads: each a range of the aggregates' key.
struct FigureSelection {
    std::vector<core::Figure> timed{core::Figure::duration, core::Figure::cpu};
    // The metrics whose names start with one of these: "" takes every metric, no prefix
    // none, and a name is its own prefix. A metric is read once however they overlap.
    std::vector<std::string> metric_prefixes;
    std::string cell_id; // one cell's; "" for every cell
};

// The Debian package one kernel of a run was resolved to, and how many samples ran on it:
// a series name resolves to whatever the archive had newest when the run (or its resume)
// prepared its kernels.
struct KernelPackage {
    int64_t run_id = 0;
    std::string kernel_name;
    std::string package;
    std::string package_version;
    int64_t samples = 0;
};

// One error-line signature of one cell of one run, counted, with its first occurrence.
struct SignatureCount {
    int64_t run_id = 0;
    std::string cell_id;
    core::Severity severity = core::Severity::error;
    std::string signature;
    int64_t lines = 0;   // error lines with this signature
    int64_t samples = 0; // distinct samples they came from
    // The first occurrence (lowest line id): its sample, source, text and evidence.
    int repetition = 0;
    std::string source;
    std::string line;
    std::string evidence;
};

// The samples of one cell of one run that ended with one outcome that is neither ok nor
// aborted and that no error line explains (no error line, or an infra error): counted,
// with the first of them (cell_id, repetition, outcome, error_count and evidence set).
struct FailureCount {
    int64_t run_id = 0;
    int64_t samples = 0;
    core::Sample first;
};

// One attempt to build a git kernel, failed ones included, so that a bisect can skip a
// commit known not to build and `rig kernel list` can say why a kernel is missing.
struct KernelBuild {
    int64_t id = 0;
    std::string repo;
    std::string commit;
    std::string config_hash;
    std::string compiler;
    core::BuildOutcome outcome = core::BuildOutcome::ok;
    double duration_seconds = 0;
    std::string log_path;
    std::string error_lines;            // the first compiler errors, or what was wrong
    std::optional<int64_t> artifact_id; // kernel_artifacts.id of an ok build
    std::string started_at;             // ISO 8601 UTC; "" = now
};

// A libvirt host of a run: status up or dropped (with the reason), and how many samples
// it stored.
struct RunHost {
    std::string uri;
    core::HostStatus status = core::HostStatus::up;
    std::string reason;
    int64_t samples = 0;
    std::string changed_at; // ISO 8601 UTC
};

// A bisect of one cell between a good and a bad commit. Its samples live in an ordinary
// run (run_id), one cell per commit; its steps say what each commit was found to be.
struct BisectInfo {
    int64_t id = 0;
    int64_t run_id = 0;
    std::string scenario_hash;
    std::string cell_id; // the scenario's cell, as the user chose it
    std::string good;    // full commit ids
    std::string bad;
    std::string criterion; // as given: errors, signature:REGEX, duration:+10%
    core::BisectStatus status = core::BisectStatus::running;
    std::string state;   // the bisect's settings as JSON, owned by bisect/
    std::string culprit; // "" until found
    std::string message; // why it stopped, when it stopped without a culprit
    std::string created_at;
    std::string updated_at;
    std::string cell_record; // the bisected cell whole (core::encode); "" before schema v8
};

// One commit measured by a bisect: an endpoint, a bisect step or a verification.
struct BisectStep {
    int64_t id = 0;
    int64_t bisect_id = 0;
    core::StepRole role = core::StepRole::bisect;
    std::string commit;
    std::string cell_id;                             // the commit's cell in the bisect's run
    std::optional<core::BuildOutcome> build_outcome; // none: no build recorded (older rows)
    double build_seconds = 0;                        // 0 for a cache hit
    bool build_cached = false;
    std::vector<int64_t> samples; // samples.id, in order
    core::Verdict verdict = core::Verdict::unsure;
    std::string evidence;
    std::string created_at;
};

// One head of a watched branch as `rig watch` tested it. `watch` names the watch (the
// scenario's name and the branch); a head is stored once per watch.
struct WatchHead {
    int64_t id = 0;
    std::string watch;
    std::string commit;
    core::HeadStatus status = core::HeadStatus::testing;
    int64_t run_id = 0;      // the run of its cells; 0 before it began
    std::string baseline;    // the good head it was held against; "" for the first
    std::string environment; // what else moves results (watch/environment.hpp)
    std::string note;        // a force-push, a new environment, why it was skipped
    std::string created_at;  // ISO 8601 UTC; "" = now
    std::string updated_at;
};

template <util::RecordOf<WatchHead> H, class Visit> void fields(H& head, Visit&& visit) {
    visit("watch", head.watch);
    visit("commit", head.commit);
    visit("status", head.status);
    visit("run_id", head.run_id);
    visit("baseline", head.baseline);
    visit("environment", head.environment);
    visit("note", head.note);
    visit("created_at", head.created_at);
    visit("updated_at", head.updated_at);
}

// A suspected regression of one cell of a head under one criterion, and what became of it.
struct WatchFinding {
    int64_t id = 0;
    int64_t head_id = 0;
    std::string cell_key;  // the cell across commits (core::Cell::key)
    std::string cell;      // its label, and the bisect's --cell filter
    std::string criterion; // as the scenario wrote it
    std::string baseline;  // the commit it regressed against
    core::FindingStatus status = core::FindingStatus::suspect;
    std::string detail; // the comparison in words
    int64_t bisect_id = 0;
    int64_t regression_id = 0;
};

template <util::RecordOf<WatchFinding> F, class Visit> void fields(F& finding, Visit&& visit) {
    visit("head_id", finding.head_id);
    visit("cell_key", finding.cell_key);
    visit("cell", finding.cell);
    visit("criterion", finding.criterion);
    visit("baseline", finding.baseline);
    visit("status", finding.status);
    visit("detail", finding.detail);
    visit("bisect_id", finding.bisect_id);
    visit("regression_id", finding.regression_id);
}

// A regression `rig watch` reported: one per culprit, cell and criterion.
struct WatchRegression {
    int64_t id = 0;
    std::string watch;
    std::string culprit;
    std::string cell_key;
    std::string criterion;
    std::string found_on; // the head it was found on
    int64_t bisect_id = 0;
    std::string subject;    // the mail's
    std::string message_id; // without <>
    std::string mail;       // the mbox file in the outbox
    bool sent = false;      // the scenario's send command ran without an error
    core::RegressionStatus status = core::RegressionStatus::open;
    std::string fixed_in; // the first head that no longer showed it
    std::string created_at;
};

template <util::RecordOf<WatchRegression> R, class Visit>
void fields(R& regression, Visit&& visit) {
    visit("watch", regression.watch);
    visit("culprit", regression.culprit);
    visit("cell_key", regression.cell_key);
    visit("criterion", regression.criterion);
    visit("found_on", regression.found_on);
    visit("bisect_id", regression.bisect_id);
    visit("subject", regression.subject);
    visit("message_id", regression.message_id);
    visit("mail", regression.mail);
    visit("sent", regression.sent);
    visit("status", regression.status);
    visit("fixed_in", regression.fixed_in);
    visit("created_at", regression.created_at);
}

// (cell id, repetition) pairs already stored for a run.
using SampleKeys = std::set<std::pair<std::string, int>>;

// How a write waits when another process holds the database's write lock (a sqlite3
// shell inside a transaction, say). Short waits, such as another rig's commit, pass
// unnoticed; past `patience`, `notice` is told who holds the lock, and again every
// `reminder`, and the write goes on waiting until the lock is free. Once `*stop` is set
// it gives up: the write fails with ErrorKind::interrupted and nothing is written.
struct LockWait {
    std::chrono::milliseconds patience{std::chrono::seconds(5)};
    std::chrono::milliseconds reminder{std::chrono::minutes(1)};
    std::function<void(const std::string& message)> notice;
    const std::atomic<bool>* stop = nullptr;
};

// Whether Database::open may create the file.
enum class Access {
    // Created, with its folder, when missing: the commands that store results.
    create,
    // Only a rig database that exists: commands that only read (report, status, lists)
    // leave no database behind a typo and never write rig's schema into a file rig did not
    // make. A missing file is a usage error ("does not exist"); an empty file, one that is
    // not SQLite or a SQLite database without rig's schema, an infra error ("is not a rig
    // database"). A rig database of an older schema is still migrated: it is rig's own.
    existing,
};

// What `rig doctor` says of a database file, without creating or changing it.
struct Integrity {
    bool ok = false;
    std::string detail; // "ok, schema version N", or what is wrong
};

class Database final {
public:
    // Opens the file (creating it and its folder under Access::create), enables WAL and
    // migrates the schema. A database whose schema is newer than this rig's is refused,
    // never downgraded.
    static Expected<std::unique_ptr<Database>> open(const std::filesystem::path& path,
                                                    Access access = Access::create);
    // Test seam: the same, with other migration scripts than rig's (version N = index + 1).
    static Expected<std::unique_ptr<Database>> open(const std::filesystem::path& path,
                                                    const std::vector<std::string>& migrations,
                                                    Access access = Access::create);
    // SQLite's quick_check of an existing file, read-only; an error when it cannot be opened.
    static Expected<Integrity> check_integrity(const std::filesystem::path& path);
    // The ids of the stored runs, and of the bisects, oldest first: read-only, without
    // migrating or waiting long for a lock, so that a shell's completion may ask at every
    // Tab. An error when the file is missing or is no rig database.
    static Expected<std::vector<int64_t>> run_ids(const std::filesystem::path& path);
    static Expected<std::vector<int64_t>> bisect_ids(const std::filesystem::path& path);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    // Without it, a write fails after 5 s of another process's lock ("database is
    // locked"), which suits a report; a run or a bisect waits instead.
    void wait_for_locks(LockWait wait);

    int schema_version() const;
    static int latest_schema_version();
    // "wal" once open() succeeded; lets tests and `rig doctor` check it.
    Expected<std::string> journal_mode();

    // Who runs a run or a bisect: the rig that runs it holds its owner lock, a FileLock on
    // DB-owners/run-ID (bisect-ID) beside the database file, for as long as it does; the
    // kernel drops it when that rig dies, even by kill -9, and a pid could name another
    // process by then. Every read below (run, runs, last_unfinished_run, bisect, bisects)
    // shows a stored status `running` whose lock file exists and is free as `interrupted`:
    // its rig is gone. Reading writes nothing (a report only reads); the rig that takes
    // the run or bisect over stores its status. A lock file that does not exist (a run of
    // a rig older than these locks, a database copied without its owners folder) leaves
    // the stored status as it is. Nothing when another rig owns it.
    Expected<std::optional<util::FileLock>> own_run(int64_t run_id);
    Expected<std::optional<util::FileLock>> own_bisect(int64_t bisect_id);

    // An empty started_at or host_facts becomes now or "{}". With `owner`, the new run's
    // owner lock is taken before its row is committed (so no reader ever sees a running
    // run without one) and handed out there.
    Expected<int64_t> begin_run(const RunInfo& run, std::optional<util::FileLock>* owner = nullptr);
    // Sets the status and stamps finished_at; an unknown run is an error.
    Expected<void> finish_run(int64_t run_id, core::RunStatus status);
    Expected<std::optional<RunInfo>> run(int64_t run_id);
    // The newest run that did not finish, optionally of one scenario hash.
    Expected<std::optional<RunInfo>> last_unfinished_run(const std::string& scenario_hash = "");
    Expected<std::vector<RunInfo>> runs();

    // Inserts or updates (run, uri): status, reason and sample count as given.
    Expected<void> set_run_host(int64_t run_id, const RunHost& host);
    Expected<std::vector<RunHost>> run_hosts(int64_t run_id);

    // Idempotent: cells are keyed by (run, cell id). Each is stored whole.
    Expected<void> add_cells(int64_t run_id, const std::vector<core::CellRecord>& cells);
    // Cells alone, without their records: what reports read, but no run of them resumes.
    Expected<void> add_cells(int64_t run_id, const std::vector<core::Cell>& cells);
    // In insertion order, with id, key, kernel_name, config, params and canonical: what
    // reports need. The kernel index and fragments are in the records.
    Expected<std::vector<core::Cell>> cells(int64_t run_id);
    // Every cell of the run whole, in insertion order; nullopt when it has none yet, or one
    // was stored without its record (before schema v8).
    Expected<std::optional<std::vector<core::CellRecord>>> cell_records(int64_t run_id);

    // One transaction per sample, with its error lines and metrics, so that a killed
    // rig loses at most the sample in flight. Returns the sample's row id.
    // The cell must have been added. A stored sample with the same (cell, repetition) is
    // replaced when its outcome is aborted; otherwise the new sample is an error. A NaN
    // metric value is an error too (SQLite would store it as NULL).
    Expected<int64_t> add_sample(int64_t run_id, const core::Sample& sample);
    // In insertion order, with their lines and metrics.
    Expected<std::vector<core::Sample>> samples(int64_t run_id);
    // The earliest sample of the cell in the run with outputs and a measured outcome other
    // than wrong-output: what later samples of the cell, and its twins, are held against.
    Expected<std::optional<ReferenceOutputs>> reference_outputs(int64_t run_id,
                                                                const std::string& cell_id);
    // Every cell's samples of these runs, by outcome (OutcomeTally), in no particular order.
    Expected<void> outcome_tallies(const std::vector<int64_t>& run_ids,
                                   const std::function<void(const OutcomeTally&)>& visit);
    // The distinct values of the chosen figures of these runs' cells, with their counts. A
    // million samples whose counter is the same in each are one row.
    Expected<void> figure_counts(const std::vector<int64_t>& run_ids,
                                 const FigureSelection& selection,
                                 const std::function<void(const FigureCount&)>& visit);
    // The names of the metrics that samples of these runs carry, sorted. It reads every
    // metric row of the runs: for error messages, not for reports.
    Expected<std::vector<std::string>> metric_names(const std::vector<int64_t>& run_ids);
    // The Debian packages the samples of these runs ran on, by run, kernel and package.
    Expected<std::vector<KernelPackage>> kernel_packages(const std::vector<int64_t>& run_ids);
    // Signatures per (run, cell, severity), ordered by run, cell and first occurrence.
    Expected<std::vector<SignatureCount>> signature_counts(const std::vector<int64_t>& run_ids);
    // Failures no error line explains, per (run, cell, outcome), ordered by run and cell.
    Expected<std::vector<FailureCount>> unexplained_failures(const std::vector<int64_t>& run_ids);
    // Samples a resumed run must not repeat: every stored one except the aborted.
    Expected<SampleKeys> finished_samples(int64_t run_id);

    // Inserts, or updates the row with the same cache key (keeping its id). Returns the id.
    Expected<int64_t> add_kernel_artifact(const KernelArtifact& artifact);
    Expected<std::optional<KernelArtifact>> find_kernel_artifact(const std::string& cache_key);
    // Every artifact, oldest first.
    Expected<std::vector<KernelArtifact>> kernel_artifacts();
    // Deletes the row (its builds keep their history, with no artifact); none is fine.
    Expected<void> remove_kernel_artifact(const std::string& cache_key);
    // Returns the build's row id.
    Expected<int64_t> add_kernel_build(const KernelBuild& build);
    // Every build, oldest first.
    Expected<std::vector<KernelBuild>> kernel_builds();

    // Bisects. A step is stored once its verdict is known, in one statement, so a killed
    // bisect has every finished step and the samples of the one in flight.
    // `owner` as in begin_run.
    Expected<int64_t> begin_bisect(const BisectInfo& bisect,
                                   std::optional<util::FileLock>* owner = nullptr);
    // Sets status, culprit and message, and stamps updated_at; an unknown id is an error.
    Expected<void> finish_bisect(int64_t bisect_id, core::BisectStatus status,
                                 const std::string& culprit, const std::string& message);
    Expected<std::optional<BisectInfo>> bisect(int64_t bisect_id);
    // Every bisect, oldest first.
    Expected<std::vector<BisectInfo>> bisects();
    Expected<int64_t> add_bisect_step(const BisectStep& step);
    // In the order they were stored.
    Expected<std::vector<BisectStep>> bisect_steps(int64_t bisect_id);
    // A stored step's verdict and evidence said again, once later samples (the other
    // endpoint's) settle what its own mean.
    Expected<void> restate_bisect_step(int64_t step_id, core::Verdict verdict,
                                       const std::string& evidence);

    // `rig watch`'s state: every write is one statement, so a killed watcher finds each
    // head, finding and regression as it last was. Adding a head stored before returns
    // that head's id and changes nothing.
    Expected<int64_t> add_watch_head(const WatchHead& head);
    Expected<void> update_watch_head(const WatchHead& head); // by id; stamps updated_at
    Expected<std::vector<WatchHead>> watch_heads(const std::string& watch); // oldest first
    // Every watch's name that has a head, sorted.
    Expected<std::vector<std::string>> watches();
    Expected<int64_t> add_watch_finding(const WatchFinding& finding);
    Expected<void> update_watch_finding(const WatchFinding& finding); // by id
    Expected<std::vector<WatchFinding>> watch_findings(int64_t head_id);
    Expected<int64_t> add_watch_regression(const WatchRegression& regression);
    Expected<void> update_watch_regression(const WatchRegression& regression); // by id
    Expected<std::vector<WatchRegression>> watch_regressions(const std::string& watch);

    struct Impl;

private:
    explicit Database(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace rig::store
