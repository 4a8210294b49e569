// SPDX-License-Identifier: MIT
// The schema's migration scripts, kept apart from the code that runs them.
#include "store/schema.hpp"

namespace rig::store {

namespace {

// Conventions, so that later features add tables or columns instead of rebuilding these:
// - Open-ended vocabularies (outcomes, statuses, verdicts) are plain TEXT checked in C++,
//   because SQLite cannot alter a CHECK constraint without copying the table. Only
//   severity, a closed pair, has a CHECK.
// - Text is NOT NULL DEFAULT '' unless "absent" differs from "empty"; NULL marks values
//   that may not exist (msize of virtiofs cells, finished_at of an open run, FKs).
// - Timestamps are ISO 8601 UTC text, so that they sort and read as they are.
// - "commit" and "release" are quoted: both are SQL keywords.
// - cells.params is a JSON object of axis -> canonical value, so that reports can use
//   json_extract(params, '$.msize') and json_each().
const char* const k_v1 = R"sql(
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    scenario_name TEXT NOT NULL DEFAULT '',
    scenario_file TEXT NOT NULL DEFAULT '',
    scenario_text TEXT NOT NULL DEFAULT '',
    scenario_hash TEXT NOT NULL DEFAULT '',
    host_facts TEXT NOT NULL DEFAULT '{}',
    rig_version TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL DEFAULT 'running'
);
CREATE INDEX runs_by_scenario ON runs (scenario_hash, id);

CREATE TABLE cells (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    cell_id TEXT NOT NULL,
    kernel_name TEXT NOT NULL DEFAULT '',
    config TEXT NOT NULL DEFAULT '',
    fs TEXT NOT NULL DEFAULT '',
    msize INTEGER,
    cache TEXT NOT NULL DEFAULT '',
    params TEXT NOT NULL DEFAULT '{}',
    canonical TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, cell_id)
);

-- AUTOINCREMENT: the id of a replaced aborted sample is never handed out again, since
-- bisect_steps.samples may still name it.
CREATE TABLE samples (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL,
    cell_id TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    accel TEXT NOT NULL DEFAULT '',
    kernel_artifact TEXT NOT NULL DEFAULT '',
    guest_seconds REAL NOT NULL DEFAULT 0,
    wall_seconds REAL NOT NULL DEFAULT 0,
    total_seconds REAL NOT NULL DEFAULT 0,
    qemu_cpu_seconds REAL NOT NULL DEFAULT 0,
    helper_cpu_seconds REAL NOT NULL DEFAULT 0,
    host_cpu_seconds REAL NOT NULL DEFAULT 0,
    host_cpu_percent REAL NOT NULL DEFAULT 0,
    mount_requested TEXT NOT NULL DEFAULT '',
    mount_negotiated TEXT NOT NULL DEFAULT '',
    msize_negotiated INTEGER,
    cache_negotiated TEXT NOT NULL DEFAULT '',
    exit_status INTEGER NOT NULL DEFAULT -1,
    error_count INTEGER NOT NULL DEFAULT 0,
    warning_count INTEGER NOT NULL DEFAULT 0,
    evidence TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL DEFAULT '',
    recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    -- A resumed run must never store a repetition twice; its index also serves "by run".
    UNIQUE (run_id, cell_id, repetition),
    FOREIGN KEY (run_id, cell_id) REFERENCES cells (run_id, cell_id) ON DELETE CASCADE
);

CREATE TABLE error_lines (
    id INTEGER PRIMARY KEY,
    sample_id INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    severity TEXT NOT NULL CHECK (severity IN ('warning', 'error')),
    source TEXT NOT NULL DEFAULT '',
    line TEXT NOT NULL DEFAULT '',
    signature TEXT NOT NULL DEFAULT ''
);
CREATE INDEX error_lines_by_sample ON error_lines (sample_id);
CREATE INDEX error_lines_by_signature ON error_lines (signature);

CREATE TABLE metrics (
    id INTEGER PRIMARY KEY,
    sample_id INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL DEFAULT ''
);
CREATE INDEX metrics_by_sample ON metrics (sample_id);

CREATE TABLE kernel_artifacts (
    id INTEGER PRIMARY KEY,
    cache_key TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    "release" TEXT NOT NULL DEFAULT '',
    package TEXT NOT NULL DEFAULT '',
    package_version TEXT NOT NULL DEFAULT '',
    "commit" TEXT NOT NULL DEFAULT '',
    config_hash TEXT NOT NULL DEFAULT '',
    compiler TEXT NOT NULL DEFAULT '',
    image_sha256 TEXT NOT NULL DEFAULT '',
    image_path TEXT NOT NULL DEFAULT '',
    modules_path TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

-- Every build attempt, failed ones included, so that a bisect can skip a commit known not
-- to build and a report can show why a cell has no samples.
CREATE TABLE kernel_builds (
    id INTEGER PRIMARY KEY,
    repo TEXT NOT NULL,
    "commit" TEXT NOT NULL,
    config_hash TEXT NOT NULL DEFAULT '',
    compiler TEXT NOT NULL DEFAULT '',
    outcome TEXT NOT NULL,
    duration_seconds REAL NOT NULL DEFAULT 0,
    log_path TEXT NOT NULL DEFAULT '',
    error_lines TEXT NOT NULL DEFAULT '',
    artifact_id INTEGER REFERENCES kernel_artifacts (id) ON DELETE SET NULL,
    started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX kernel_builds_by_commit ON kernel_builds ("commit", config_hash, compiler);
CREATE INDEX kernel_builds_by_artifact ON kernel_builds (artifact_id);

CREATE TABLE bisects (
    id INTEGER PRIMARY KEY,
    scenario_hash TEXT NOT NULL,
    cell_id TEXT NOT NULL,
    good TEXT NOT NULL,
    bad TEXT NOT NULL,
    criterion TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'running',
    state TEXT NOT NULL DEFAULT '{}',
    culprit TEXT,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX bisects_by_cell ON bisects (scenario_hash, cell_id);

-- samples is a JSON array of samples.id measured at this commit.
CREATE TABLE bisect_steps (
    id INTEGER PRIMARY KEY,
    bisect_id INTEGER NOT NULL REFERENCES bisects (id) ON DELETE CASCADE,
    "commit" TEXT NOT NULL,
    build_id INTEGER REFERENCES kernel_builds (id) ON DELETE SET NULL,
    samples TEXT NOT NULL DEFAULT '[]',
    verdict TEXT NOT NULL DEFAULT '',
    evidence TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX bisect_steps_by_bisect ON bisect_steps (bisect_id);
CREATE INDEX bisect_steps_by_build ON bisect_steps (build_id);
)sql";

// v2: the libvirt hosts a run spread its cells over. A host that dropped out keeps its
// row with status 'dropped' and why, so that a reader knows its cell ran elsewhere.
const char* const k_v2_run_hosts = R"sql(
CREATE TABLE run_hosts (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    uri TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'up',
    reason TEXT NOT NULL DEFAULT '',
    samples INTEGER NOT NULL DEFAULT 0,
    changed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    PRIMARY KEY (run_id, uri)
);
)sql";

// v3: a covering index for reports, which read these columns of every sample of a run:
// over a million samples, scanning it instead of the table took the read from seconds
// to a fraction of one (tests/bench/report-scale).
const char* const k_v3_report_index = R"sql(
CREATE INDEX samples_for_reports ON samples (run_id, cell_id, outcome, guest_seconds,
    wall_seconds, host_cpu_percent, error_count, warning_count, msize_negotiated,
    cache_negotiated);
)sql";

// v4: what `rig bisect` needs beyond v1's tables: the run that holds its samples and the
// reason it stopped; per step its role (an endpoint, a bisect step, a verification), the
// commit's cell in that run and the build as the step saw it (a cache hit has no build row).
const char* const k_v4_bisect = R"sql(
ALTER TABLE bisects ADD COLUMN run_id INTEGER REFERENCES runs (id);
ALTER TABLE bisects ADD COLUMN message TEXT NOT NULL DEFAULT '';
ALTER TABLE bisect_steps ADD COLUMN role TEXT NOT NULL DEFAULT 'bisect';
ALTER TABLE bisect_steps ADD COLUMN cell_id TEXT NOT NULL DEFAULT '';
ALTER TABLE bisect_steps ADD COLUMN build_outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE bisect_steps ADD COLUMN build_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE bisect_steps ADD COLUMN build_cached INTEGER NOT NULL DEFAULT 0;
)sql";

// v5: reports read every metric of every sample of a run, found by sample. An index that
// holds name, value and unit answers from the index alone: reading 6 million metric rows
// with their samples took 5.5 s through metrics_by_sample and 1.4 s through this one
// (tests/bench/report-scale 200000 build 30). It starts with sample_id, so it serves
// metrics_by_sample's lookups (and ON DELETE CASCADE) too, and that index goes.
const char* const k_v5_metrics_index = R"sql(
CREATE INDEX metrics_for_reports ON metrics (sample_id, name, value, unit);
DROP INDEX metrics_by_sample;
)sql";

// v6: the host CPUs a sample's guest was pinned to under --jobs, so that a slow CPU set
// shows up as such rather than as a slow kernel.
const char* const k_v6_sample_cpus = R"sql(
ALTER TABLE samples ADD COLUMN cpus TEXT NOT NULL DEFAULT '';
)sql";

// v7: how a run was started where the command line overrode its scenario (--backend,
// --uri, --jobs), so that `rig run --resume` carries on the same way. '' and 0: the
// scenario's (every run before v7).
const char* const k_v7_run_launch = R"sql(
ALTER TABLE runs ADD COLUMN backend TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN uris TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN jobs INTEGER NOT NULL DEFAULT 0;
)sql";

// v8: each cell whole (core/cell_record.hpp, JSON), so that a run resumes and a bisect
// steps from the database alone, and its revision-free key, which lines one cell up
// across the commits it was tested at. A bisect keeps the record of the cell it bisects.
// '' for cells stored before v8: a resume of such a run expands its stored scenario.
const char* const k_v8_cell_records = R"sql(
ALTER TABLE cells ADD COLUMN record TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN cell_key TEXT NOT NULL DEFAULT '';
CREATE INDEX cells_by_key ON cells (cell_key, run_id);
ALTER TABLE bisects ADD COLUMN cell_record TEXT NOT NULL DEFAULT '';
)sql";

// v9: `rig watch`: the heads of a watched branch, the suspected regressions found on each
// and the regressions reported (watch/).
const char* const k_v9_watch = R"sql(
CREATE TABLE watch_heads (
    id INTEGER PRIMARY KEY,
    watch TEXT NOT NULL,
    "commit" TEXT NOT NULL,
    status TEXT NOT NULL,
    run_id INTEGER NOT NULL DEFAULT 0,
    baseline TEXT NOT NULL DEFAULT '',
    environment TEXT NOT NULL DEFAULT '',
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (watch, "commit")
);
CREATE TABLE watch_findings (
    id INTEGER PRIMARY KEY,
    head_id INTEGER NOT NULL REFERENCES watch_heads(id),
    cell_key TEXT NOT NULL,
    cell TEXT NOT NULL,
    criterion TEXT NOT NULL,
    baseline TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    bisect_id INTEGER NOT NULL DEFAULT 0,
    regression_id INTEGER NOT NULL DEFAULT 0,
    UNIQUE (head_id, cell_key, criterion, baseline)
);
CREATE TABLE watch_regressions (
    id INTEGER PRIMARY KEY,
    watch TEXT NOT NULL,
    culprit TEXT NOT NULL,
    cell_key TEXT NOT NULL,
    criterion TEXT NOT NULL,
    found_on TEXT NOT NULL,
    bisect_id INTEGER NOT NULL DEFAULT 0,
    subject TEXT NOT NULL DEFAULT '',
    message_id TEXT NOT NULL DEFAULT '',
    mail TEXT NOT NULL DEFAULT '',
    sent INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    fixed_in TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    UNIQUE (watch, culprit, cell_key, criterion)
);
)sql";

// v10: per-cell aggregates, kept as each sample is stored (store/aggregates.cpp) and filled
// from the stored samples by the migration, so that a report reads a row per cell and
// outcome and a row per distinct value of a figure, not a row per sample and metric:
// over a million samples of 50 metrics each a table read 17 s, a baseline comparison 35 s
// (tests/bench/report-scale). A primary key's columns cannot be NULL here: 0 stands for no
// negotiated msize.
const char* const k_v10_cell_aggregates = R"sql(
CREATE TABLE cell_outcomes (
    run_id INTEGER NOT NULL,
    cell_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    msize_negotiated INTEGER NOT NULL DEFAULT 0,
    cache_negotiated TEXT NOT NULL DEFAULT '',
    kernel_artifact TEXT NOT NULL DEFAULT '',
    samples INTEGER NOT NULL DEFAULT 0,
    error_count INTEGER NOT NULL DEFAULT 0,
    warning_count INTEGER NOT NULL DEFAULT 0,
    with_errors INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, cell_id, outcome, msize_negotiated, cache_negotiated, kernel_artifact),
    FOREIGN KEY (run_id, cell_id) REFERENCES cells (run_id, cell_id) ON DELETE CASCADE
) WITHOUT ROWID;
-- figure is a core::Figure word; name the metric's, '' for duration and cpu.
CREATE TABLE cell_values (
    run_id INTEGER NOT NULL,
    figure TEXT NOT NULL,
    name TEXT NOT NULL,
    cell_id TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL DEFAULT '',
    count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, figure, name, cell_id, value),
    FOREIGN KEY (run_id, cell_id) REFERENCES cells (run_id, cell_id) ON DELETE CASCADE
) WITHOUT ROWID;
)sql";

// v11: each sample's outputs as the guest saw them (core::Sample::outputs), which later
// samples are held against. '' before: none kept.
const char* const k_v11_sample_outputs = R"sql(
ALTER TABLE samples ADD COLUMN outputs TEXT NOT NULL DEFAULT '';
)sql";

// v12: the machine each sample's guest booted on (core::Sample::machine). '' before: q35,
// the only one rig booted then.
const char* const k_v12_sample_machine = R"sql(
ALTER TABLE samples ADD COLUMN machine TEXT NOT NULL DEFAULT '';
)sql";

} // namespace

const std::vector<std::string>& migrations() {
    static const std::vector<std::string> scripts{k_v1,
                                                  k_v2_run_hosts,
                                                  k_v3_report_index,
                                                  k_v4_bisect,
                                                  k_v5_metrics_index,
                                                  k_v6_sample_cpus,
                                                  k_v7_run_launch,
                                                  k_v8_cell_records,
                                                  k_v9_watch,
                                                  k_v10_cell_aggregates,
                                                  k_v11_sample_outputs,
                                                  k_v12_sample_machine};
    return scripts;
}

} // namespace rig::store
