// SPDX-License-Identifier: MIT
// The results database on real SQLite files: migrations, runs, cells, samples, artifacts.
#include "full_records.hpp"
#include "store/schema.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rig::store {
namespace {

using rig::test::TempDir;

namespace fs = std::filesystem;

std::unique_ptr<Database> open_ok(const fs::path& path) {
    auto db = Database::open(path);
    EXPECT_TRUE(db) << db.error().message;
    return db ? std::move(*db) : nullptr;
}

RunInfo make_run(const std::string& hash = "hash-a") {
    RunInfo run;
    run.scenario_name = "smoke";
    run.scenario_file = "scenarios/smoke.yaml";
    run.scenario_text = "name: smoke\n";
    run.scenario_hash = hash;
    run.host_facts = R"({"cpus":8})";
    run.rig_version = "0.1.0";
    run.started_at = "2024-05-01T10:00:00Z";
    return run;
}

core::Cell make_cell(const std::string& id, const std::string& msize = "65536") {
    core::Cell cell;
    cell.id = id;
    cell.kernel_name = "stable";
    cell.config = "debug";
    cell.params = {{"cache", "loose"}, {"fs", "9p"}, {"msize", msize}};
    cell.canonical = "kernel{stable};cache=loose;fs=9p;msize=" + msize;
    return cell;
}

core::Sample make_sample(const std::string& cell_id, int repetition,
                         core::Outcome outcome = core::Outcome::ok) {
    core::Sample sample;
    sample.cell_id = cell_id;
    sample.repetition = repetition;
    sample.outcome = outcome;
    sample.accel = "kvm";
    sample.kernel_artifact = "artifact-key";
    sample.guest_seconds = 1.5;
    sample.wall_seconds = 2.25;
    sample.total_seconds = 7.125;
    sample.qemu_cpu_seconds = 3.5;
    sample.helper_cpu_seconds = 0.75;
    sample.host_cpu_seconds = 4.0625;
    sample.host_cpu_percent = 12.5;
    sample.mount_requested = "trans=virtio,cache=loose";
    sample.mount_negotiated = "rw,relatime,cache=loose,msize=65536";
    sample.msize_negotiated = 65536;
    sample.cache_negotiated = "loose";
    sample.exit_status = 0;
    sample.error_count = 1;
    sample.warning_count = 1;
    sample.evidence = "line one\nline 'two' \"quoted\"";
    sample.started_at = "2024-05-01T10:00:05Z";
    sample.outputs = std::string(64, 'b') + "  units/unit_0.o\n";
    sample.lines = {
        {core::Severity::error, "dmesg", "9pnet: bad packet at 0xffff1234", "9pnet: bad packet at"},
        {core::Severity::warning, "console", "WARNING: CPU: 1 PID: 42", "WARNING: CPU: PID:"},
    };
    sample.metrics = {{"compile_seconds", 1.25, "s"}, {"files", 40, ""}};
    return sample;
}

// A run with two cells, ready for samples.
struct Fixture {
    TempDir dir;
    std::unique_ptr<Database> db = open_ok(dir.path() / "results.db");
    int64_t run_id = 0;

    Fixture() {
        run_id = db->begin_run(make_run()).value();
        EXPECT_TRUE(db->add_cells(run_id, {make_cell("aaaaaaaaaaaa"), make_cell("bbbbbbbbbbbb")}));
    }
};

void expect_same(const core::Sample& expected, const core::Sample& actual) {
    EXPECT_EQ(actual.cell_id, expected.cell_id);
    EXPECT_EQ(actual.repetition, expected.repetition);
    EXPECT_EQ(actual.outcome, expected.outcome);
    EXPECT_EQ(actual.accel, expected.accel);
    EXPECT_EQ(actual.kernel_artifact, expected.kernel_artifact);
    EXPECT_EQ(actual.guest_seconds, expected.guest_seconds);
    EXPECT_EQ(actual.wall_seconds, expected.wall_seconds);
    EXPECT_EQ(actual.total_seconds, expected.total_seconds);
    EXPECT_EQ(actual.qemu_cpu_seconds, expected.qemu_cpu_seconds);
    EXPECT_EQ(actual.helper_cpu_seconds, expected.helper_cpu_seconds);
    EXPECT_EQ(actual.host_cpu_seconds, expected.host_cpu_seconds);
    EXPECT_EQ(actual.host_cpu_percent, expected.host_cpu_percent);
    EXPECT_EQ(actual.mount_requested, expected.mount_requested);
    EXPECT_EQ(actual.mount_negotiated, expected.mount_negotiated);
    EXPECT_EQ(actual.msize_negotiated, expected.msize_negotiated);
    EXPECT_EQ(actual.cache_negotiated, expected.cache_negotiated);
    EXPECT_EQ(actual.exit_status, expected.exit_status);
    EXPECT_EQ(actual.error_count, expected.error_count);
    EXPECT_EQ(actual.warning_count, expected.warning_count);
    EXPECT_EQ(actual.evidence, expected.evidence);
    EXPECT_EQ(actual.started_at, expected.started_at);
    ASSERT_EQ(actual.lines.size(), expected.lines.size());
    for (size_t i = 0; i < expected.lines.size(); ++i) {
        EXPECT_EQ(actual.lines[i].severity, expected.lines[i].severity);
        EXPECT_EQ(actual.lines[i].source, expected.lines[i].source);
        EXPECT_EQ(actual.lines[i].line, expected.lines[i].line);
        EXPECT_EQ(actual.lines[i].signature, expected.lines[i].signature);
    }
    ASSERT_EQ(actual.metrics.size(), expected.metrics.size());
    for (size_t i = 0; i < expected.metrics.size(); ++i) {
        EXPECT_EQ(actual.metrics[i].name, expected.metrics[i].name);
        EXPECT_EQ(actual.metrics[i].value, expected.metrics[i].value);
        EXPECT_EQ(actual.metrics[i].unit, expected.metrics[i].unit);
    }
}

// Scripts that only bump the version, to fake databases of other rigs.
std::vector<std::string> dummy_migrations(int count) {
    std::vector<std::string> scripts;
    for (int i = 0; i < count; ++i)
        scripts.push_back("CREATE TABLE dummy_" + std::to_string(i) + " (x)");
    return scripts;
}

TEST(StoreOpen, FreshDatabaseIsAtLatestVersionInANewFolder) {
    TempDir dir;
    auto path = dir.path() / "nested" / "deeper" / "results.db";
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    EXPECT_TRUE(fs::exists(path));
    EXPECT_GE(Database::latest_schema_version(), 1);
    EXPECT_EQ(db->schema_version(), Database::latest_schema_version());
}

TEST(StoreOpen, JournalModeIsWal) {
    TempDir dir;
    auto db = open_ok(dir.path() / "results.db");
    ASSERT_TRUE(db);
    EXPECT_EQ(db->journal_mode().value(), "wal");
}

TEST(StoreOpen, ReopenKeepsData) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    int64_t run_id = 0;
    {
        auto db = open_ok(path);
        ASSERT_TRUE(db);
        run_id = db->begin_run(make_run()).value();
        ASSERT_TRUE(db->add_cells(run_id, {make_cell("aaaaaaaaaaaa")}));
        ASSERT_TRUE(db->add_sample(run_id, make_sample("aaaaaaaaaaaa", 0)));
    }
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    EXPECT_EQ(db->schema_version(), Database::latest_schema_version());
    auto run = db->run(run_id).value();
    ASSERT_TRUE(run);
    EXPECT_EQ(run->scenario_name, "smoke");
    auto samples = db->samples(run_id).value();
    ASSERT_EQ(samples.size(), 1u);
    expect_same(make_sample("aaaaaaaaaaaa", 0), samples[0]);
}

// What `rig complete` offers for a run or bisect id: read without opening the database
// for writing, and nothing (an error) where there is no database.
TEST(StoreOpen, RunAndBisectIdsAreReadOnly) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    EXPECT_FALSE(Database::run_ids(path));
    {
        auto db = open_ok(path);
        ASSERT_TRUE(db);
        ASSERT_TRUE(db->begin_run(make_run()));
        ASSERT_TRUE(db->begin_run(make_run()));
    }
    EXPECT_EQ(Database::run_ids(path).value(), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(Database::bisect_ids(path).value(), std::vector<int64_t>{});
    EXPECT_FALSE(fs::exists(dir.path() / "typo.db"));
    EXPECT_FALSE(Database::bisect_ids(dir.path() / "typo.db"));
    EXPECT_FALSE(fs::exists(dir.path() / "typo.db"));
}

TEST(StoreOpen, EmptyFileMigrates) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    std::ofstream(path).close();
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    EXPECT_EQ(db->schema_version(), Database::latest_schema_version());
    EXPECT_TRUE(db->begin_run(make_run()));
}

// Access::existing is for commands that only read: it creates nothing, and writes nothing
// into a file that is not a rig database.
TEST(StoreOpen, ExistingAccessNeverCreatesTheFileOrItsFolder) {
    TempDir dir;
    auto path = dir.path() / "typo" / "results.db";
    auto db = Database::open(path, Access::existing);
    ASSERT_FALSE(db);
    EXPECT_EQ(db.error().kind, ErrorKind::usage);
    EXPECT_EQ(db.error().message, "no results database at " + path.string() +
                                      " (it does not exist): `rig run` a scenario first, or "
                                      "pass --db");
    EXPECT_FALSE(fs::exists(path.parent_path()));
}

TEST(StoreOpen, ExistingAccessLeavesFilesThatAreNotRigDatabasesAsTheyWere) {
    TempDir dir;
    auto empty = dir.path() / "empty.db";
    std::ofstream(empty).close();
    auto opened = Database::open(empty, Access::existing);
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().message, empty.string() + " is not a rig database (an empty file); "
                                                       "pass the results database with --db");
    EXPECT_EQ(fs::file_size(empty), 0u);

    auto text = dir.path() / "notes.txt";
    std::ofstream(text) << "not a database, but long enough to be read as a header or not\n";
    const auto text_size = fs::file_size(text);
    opened = Database::open(text, Access::existing);
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().message, text.string() + " is not a rig database (not SQLite); "
                                                      "pass the results database with --db");
    EXPECT_EQ(fs::file_size(text), text_size);

    // Someone else's SQLite database: rig's schema is not written into it.
    auto other = dir.path() / "other.db";
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(other.c_str(), &handle), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(handle, "CREATE TABLE notes (text)", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(handle);
    const auto other_size = fs::file_size(other);
    opened = Database::open(other, Access::existing);
    ASSERT_FALSE(opened);
    EXPECT_NE(opened.error().message.find("is not a rig database (a SQLite database without "
                                          "rig's schema)"),
              std::string::npos)
        << opened.error().message;
    EXPECT_EQ(fs::file_size(other), other_size);
    EXPECT_FALSE(fs::exists(other.string() + "-wal"));
}

TEST(StoreOpen, ExistingAccessOpensARigDatabase) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    ASSERT_TRUE(open_ok(path)->begin_run(make_run()));
    auto db = Database::open(path, Access::existing);
    ASSERT_TRUE(db) << db.error().message;
    auto run = (*db)->run(1);
    ASSERT_TRUE(run && *run) << (run ? "no run 1" : run.error().message);
}

// Every page but the first overwritten: the schema is readable, the tables are not.
void damage(const fs::path& path) {
    const auto size = fs::file_size(path);
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    for (auto at = 4096u; at < size; ++at)
        file.put(static_cast<char>(0xa5));
}

TEST(StoreIntegrity, AHealthyDatabaseIsOkAndNamesItsSchemaVersion) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    open_ok(path);
    auto integrity = Database::check_integrity(path);
    ASSERT_TRUE(integrity) << integrity.error().message;
    EXPECT_TRUE(integrity->ok);
    EXPECT_EQ(integrity->detail,
              "ok, schema version " + std::to_string(Database::latest_schema_version()));
    auto missing = Database::check_integrity(dir.path() / "none.db");
    ASSERT_FALSE(missing);
    EXPECT_FALSE(fs::exists(dir.path() / "none.db"));
}

TEST(StoreIntegrity, ADamagedDatabaseIsNamedAndQueriesSendToRigDoctor) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    {
        auto db = open_ok(path);
        ASSERT_TRUE(db->begin_run(make_run()));
    }
    damage(path);
    auto integrity = Database::check_integrity(path);
    ASSERT_TRUE(integrity) << integrity.error().message;
    EXPECT_FALSE(integrity->ok);
    EXPECT_NE(integrity->detail.find(path.string()), std::string::npos) << integrity->detail;

    // Wherever SQLite meets the damage, opening or querying, the error names the file and
    // `rig doctor`.
    std::string message;
    if (auto db = Database::open(path, Access::existing); !db)
        message = db.error().message;
    else if (auto run = (*db)->run(1); !run)
        message = run.error().message;
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("`rig doctor` checks it"), std::string::npos) << message;
}

TEST(StoreOpen, VersionZeroDatabaseMigrates) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    {
        auto db = Database::open(path, std::vector<std::string>{});
        ASSERT_TRUE(db) << db.error().message;
        EXPECT_EQ((*db)->schema_version(), 0);
    }
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    EXPECT_EQ(db->schema_version(), Database::latest_schema_version());
    EXPECT_TRUE(db->begin_run(make_run()));
}

TEST(StoreOpen, NewerDatabaseIsRefused) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    const int newer = Database::latest_schema_version() + 1;
    ASSERT_TRUE(Database::open(path, dummy_migrations(newer)));
    auto db = Database::open(path);
    ASSERT_FALSE(db);
    EXPECT_EQ(db.error().kind, ErrorKind::infra);
    EXPECT_NE(db.error().message.find(path.string()), std::string::npos) << db.error().message;
    EXPECT_NE(db.error().message.find("schema version " + std::to_string(newer)), std::string::npos)
        << db.error().message;
}

TEST(StoreOpen, FailedMigrationKeepsThePreviousVersion) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    auto broken = Database::open(path, {"CREATE TABLE a (x)", "CREATE TABLE b (x); CREATE TABLE"});
    ASSERT_FALSE(broken);
    EXPECT_NE(broken.error().message.find("migration to schema version 2"), std::string::npos)
        << broken.error().message;
    EXPECT_NE(broken.error().message.find(path.string()), std::string::npos);

    // Version 1 was committed alone; version 2 left neither table b nor its number.
    auto db = Database::open(path, {"CREATE TABLE a (x)", "CREATE TABLE b (x)"});
    ASSERT_TRUE(db) << db.error().message;
    EXPECT_EQ((*db)->schema_version(), 2);
}

// The names of the metrics table's indexes, read past rig's store.
std::vector<std::string> metric_indexes(const fs::path& path) {
    sqlite3* handle = nullptr;
    std::vector<std::string> names;
    if (sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* statement = nullptr;
        sqlite3_prepare_v2(handle,
                           "SELECT name FROM sqlite_master WHERE type = 'index' AND "
                           "tbl_name = 'metrics' ORDER BY name",
                           -1, &statement, nullptr);
        while (statement && sqlite3_step(statement) == SQLITE_ROW)
            names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)));
        sqlite3_finalize(statement);
    }
    sqlite3_close(handle);
    return names;
}

TEST(StoreOpen, ASampleKeepsTheCpusItRanOn) {
    TempDir dir;
    auto db = open_ok(dir.path() / "results.db");
    ASSERT_TRUE(db);
    int64_t run_id = db->begin_run(make_run()).value();
    ASSERT_TRUE(db->add_cells(run_id, {make_cell("aaaaaaaaaaaa")}));
    core::Sample sample = make_sample("aaaaaaaaaaaa", 0);
    sample.cpus = "2-3";
    ASSERT_TRUE(db->add_sample(run_id, sample));
    auto stored = db->samples(run_id).value();
    ASSERT_EQ(stored.size(), 1u);
    EXPECT_EQ(stored[0].cpus, "2-3");
}

TEST(StoreOpen, Version4DatabaseGetsTheMetricsIndexAndKeepsItsMetrics) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    const int64_t run_id = 1;
    std::vector<std::string> v4(migrations().begin(), migrations().begin() + 4);
    ASSERT_TRUE(Database::open(path, v4));
    // Today's begin_run and add_sample write columns a version 4 database lacks: the rows
    // as v4 had them.
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(handle, "INSERT INTO runs (id, started_at) VALUES (1, 'now')", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    std::string insert = "INSERT INTO cells (run_id, cell_id) VALUES (1, 'aaaaaaaaaaaa');"
                         "INSERT INTO samples (id, run_id, cell_id, repetition, outcome) VALUES "
                         "(1, 1, 'aaaaaaaaaaaa', 0, 'ok');"
                         "INSERT INTO metrics (sample_id, name, value, unit) VALUES "
                         "(1, 'compile_seconds', 1.25, 's'), (1, 'files', 40, '');";
    EXPECT_EQ(sqlite3_exec(handle, insert.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(handle);
    sqlite3_close(handle);
    EXPECT_EQ(metric_indexes(path), std::vector<std::string>{"metrics_by_sample"});
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    EXPECT_EQ(db->schema_version(), Database::latest_schema_version());
    EXPECT_EQ(metric_indexes(path), std::vector<std::string>{"metrics_for_reports"});
    auto samples = db->samples(run_id).value();
    ASSERT_EQ(samples.size(), 1u);
    ASSERT_EQ(samples[0].metrics.size(), 2u);
    EXPECT_EQ(samples[0].metrics[0].name, "compile_seconds");
    EXPECT_EQ(samples[0].metrics[0].unit, "s");
    EXPECT_EQ(samples[0].metrics[1].value, 40);
    // And the aggregates the later migration filled from them.
    FigureSelection every;
    every.metric_prefixes = {""};
    std::vector<std::string> names;
    ASSERT_TRUE(db->figure_counts({run_id}, every, [&](const FigureCount& c) {
        names.push_back(c.name + "=" + std::to_string(c.value));
    }));
    EXPECT_EQ(names, (std::vector<std::string>{"compile_seconds=1.250000", "files=40.000000"}));
}

TEST(StoreRuns, BeginFinishAndLastUnfinished) {
    TempDir dir;
    auto db = open_ok(dir.path() / "results.db");
    ASSERT_TRUE(db);
    EXPECT_FALSE(db->last_unfinished_run().value());

    RunInfo info = make_run("hash-a");
    int64_t first = db->begin_run(info).value();
    auto stored = db->run(first).value();
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->id, first);
    EXPECT_EQ(stored->scenario_name, info.scenario_name);
    EXPECT_EQ(stored->scenario_file, info.scenario_file);
    EXPECT_EQ(stored->scenario_text, info.scenario_text);
    EXPECT_EQ(stored->scenario_hash, info.scenario_hash);
    EXPECT_EQ(stored->host_facts, info.host_facts);
    EXPECT_EQ(stored->rig_version, info.rig_version);
    EXPECT_EQ(stored->started_at, info.started_at);
    EXPECT_EQ(stored->finished_at, "");
    EXPECT_EQ(stored->status, core::RunStatus::running);

    EXPECT_EQ(db->last_unfinished_run().value()->id, first);
    EXPECT_EQ(db->last_unfinished_run("hash-a").value()->id, first);
    EXPECT_FALSE(db->last_unfinished_run("hash-b").value());

    int64_t second = db->begin_run(make_run("hash-b")).value();
    EXPECT_EQ(db->last_unfinished_run().value()->id, second);
    EXPECT_EQ(db->last_unfinished_run("hash-a").value()->id, first);

    ASSERT_TRUE(db->finish_run(second, core::RunStatus::finished));
    stored = db->run(second).value();
    EXPECT_EQ(stored->status, core::RunStatus::finished);
    EXPECT_FALSE(stored->finished_at.empty());
    EXPECT_EQ(db->last_unfinished_run().value()->id, first);

    // An interrupted run is still one to resume.
    ASSERT_TRUE(db->finish_run(first, core::RunStatus::interrupted));
    EXPECT_EQ(db->last_unfinished_run().value()->id, first);

    EXPECT_EQ(db->runs().value().size(), 2u);
    EXPECT_FALSE(db->run(999).value());
    EXPECT_FALSE(db->finish_run(999, core::RunStatus::finished));
}

TEST(StoreRuns, EmptyStartGetsDefaults) {
    TempDir dir;
    auto db = open_ok(dir.path() / "results.db");
    ASSERT_TRUE(db);
    RunInfo info = make_run();
    info.started_at.clear();
    info.host_facts.clear();
    auto stored = db->run(db->begin_run(info).value()).value();
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->started_at.size(), std::string("2024-05-01T10:00:00Z").size());
    EXPECT_EQ(stored->host_facts, "{}");
    EXPECT_EQ(stored->status, core::RunStatus::running);
    // Nothing given on the command line: a resume takes the scenario's choices.
    EXPECT_FALSE(stored->backend);
    EXPECT_TRUE(stored->uris.empty());
    EXPECT_EQ(stored->jobs, 0);
}

// What `rig run --backend libvirt --uri A --uri B --jobs 2` chose, for its resume.
TEST(StoreRuns, CommandLineChoicesAreKeptForTheResume) {
    TempDir dir;
    auto db = open_ok(dir.path() / "results.db");
    ASSERT_TRUE(db);
    RunInfo info = make_run();
    info.backend = core::Backend::libvirt;
    info.uris = {"qemu:///system", "qemu+ssh://lab2/system?keyfile=/k\"q"};
    info.jobs = 2;
    auto stored = db->run(db->begin_run(info).value()).value();
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->backend, core::Backend::libvirt);
    EXPECT_EQ(stored->uris, info.uris);
    EXPECT_EQ(stored->jobs, 2);
}

TEST(StoreRuns, AStatusWordRigDoesNotKnowIsAnErrorNotADefault) {
    TempDir dir;
    const fs::path path = dir.path() / "results.db";
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    int64_t id = db->begin_run(make_run()).value();
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(handle, "UPDATE runs SET status = 'paused'", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(handle);
    auto stored = db->run(id);
    ASSERT_FALSE(stored);
    EXPECT_NE(stored.error().message.find("runs.status: 'paused' is not a run status"),
              std::string::npos)
        << stored.error().message;
}

TEST(StoreCells, AddIsIdempotentAndParamsRoundTrip) {
    Fixture f;
    core::Cell odd = make_cell("cccccccccccc");
    odd.params["command"] = "echo \"a\\b\"\n\tdone;x=y";
    ASSERT_TRUE(f.db->add_cells(f.run_id, {odd, make_cell("aaaaaaaaaaaa")}));
    ASSERT_TRUE(f.db->add_cells(f.run_id, {odd}));

    auto cells = f.db->cells(f.run_id).value();
    ASSERT_EQ(cells.size(), 3u);
    EXPECT_EQ(cells[0].id, "aaaaaaaaaaaa");
    EXPECT_EQ(cells[1].id, "bbbbbbbbbbbb");
    EXPECT_EQ(cells[2].id, odd.id);
    EXPECT_EQ(cells[2].kernel_name, odd.kernel_name);
    EXPECT_EQ(cells[2].config, odd.config);
    EXPECT_EQ(cells[2].canonical, odd.canonical);
    EXPECT_EQ(cells[2].params, odd.params);
}

TEST(StoreCells, UnknownRunIsRejected) {
    Fixture f;
    EXPECT_FALSE(f.db->add_cells(999, {make_cell("aaaaaaaaaaaa")}));
}

TEST(StoreSamples, RoundTripEveryField) {
    Fixture f;
    core::Sample full = make_sample("aaaaaaaaaaaa", 0);
    core::Sample sparse = make_sample("bbbbbbbbbbbb", 3, core::Outcome::kernel_panic);
    sparse.msize_negotiated.reset();
    sparse.lines.clear();
    sparse.metrics.clear();
    sparse.exit_status = -1;
    int64_t full_id = f.db->add_sample(f.run_id, full).value();
    int64_t sparse_id = f.db->add_sample(f.run_id, sparse).value();
    EXPECT_NE(full_id, sparse_id);

    auto samples = f.db->samples(f.run_id).value();
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].id, full_id);
    expect_same(full, samples[0]);
    EXPECT_EQ(samples[1].id, sparse_id);
    expect_same(sparse, samples[1]);
}

TEST(StoreSamples, EveryFieldOfTheListRoundTrips) {
    Fixture f;
    core::Sample sample = test::full_sample();
    sample.cell_id = "aaaaaaaaaaaa";
    ASSERT_EQ(test::fields_left_default(sample), "");
    sample.id = f.db->add_sample(f.run_id, sample).value();
    auto samples = f.db->samples(f.run_id).value();
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_EQ(test::fields_differing(samples[0], sample), "");
    EXPECT_TRUE(samples[0] == sample);
}

TEST(StoreSamples, FinishedSamplesSkipAborted) {
    Fixture f;
    ASSERT_TRUE(f.db->add_sample(f.run_id, make_sample("aaaaaaaaaaaa", 0)));
    ASSERT_TRUE(f.db->add_sample(f.run_id, make_sample("aaaaaaaaaaaa", 1, core::Outcome::errors)));
    ASSERT_TRUE(f.db->add_sample(f.run_id, make_sample("bbbbbbbbbbbb", 0, core::Outcome::aborted)));
    SampleKeys expected{{"aaaaaaaaaaaa", 0}, {"aaaaaaaaaaaa", 1}};
    EXPECT_EQ(f.db->finished_samples(f.run_id).value(), expected);
    EXPECT_TRUE(f.db->finished_samples(999).value().empty());
}

TEST(StoreSamples, DuplicateOfFinishedSampleIsRejected) {
    Fixture f;
    ASSERT_TRUE(f.db->add_sample(f.run_id, make_sample("aaaaaaaaaaaa", 0)));
    core::Sample again = make_sample("aaaaaaaaaaaa", 0, core::Outcome::workload_failed);
    auto result = f.db->add_sample(f.run_id, again);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, ErrorKind::infra);
    EXPECT_NE(result.error().message.find("already stored"), std::string::npos);

    auto samples = f.db->samples(f.run_id).value();
    ASSERT_EQ(samples.size(), 1u);
    expect_same(make_sample("aaaaaaaaaaaa", 0), samples[0]);
}

TEST(StoreSamples, AbortedSampleIsReplaced) {
    Fixture f;
    core::Sample aborted = make_sample("aaaaaaaaaaaa", 0, core::Outcome::aborted);
    aborted.lines = {{core::Severity::error, "console", "stale", "stale"}};
    aborted.metrics = {{"stale", 1, ""}};
    int64_t aborted_id = f.db->add_sample(f.run_id, aborted).value();

    core::Sample real = make_sample("aaaaaaaaaaaa", 0);
    int64_t real_id = f.db->add_sample(f.run_id, real).value();
    EXPECT_NE(real_id, aborted_id);

    auto samples = f.db->samples(f.run_id).value();
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_EQ(samples[0].id, real_id);
    expect_same(real, samples[0]);
    EXPECT_EQ(f.db->finished_samples(f.run_id).value(), (SampleKeys{{"aaaaaaaaaaaa", 0}}));
}

TEST(StoreSamples, UnknownRunOrCellFailsAndLeavesNothing) {
    Fixture f;
    auto result = f.db->add_sample(999, make_sample("aaaaaaaaaaaa", 0));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, ErrorKind::infra);
    EXPECT_NE(result.error().message.find("FOREIGN KEY"), std::string::npos)
        << result.error().message;
    EXPECT_NE(result.error().message.find("results.db"), std::string::npos);
    EXPECT_NE(result.error().message.find("INSERT INTO samples"), std::string::npos);
    EXPECT_FALSE(f.db->add_sample(f.run_id, make_sample("dddddddddddd", 0)));
    EXPECT_TRUE(f.db->samples(999).value().empty());
    EXPECT_TRUE(f.db->samples(f.run_id).value().empty());
    // The failed transaction was rolled back, so the connection still writes.
    EXPECT_TRUE(f.db->add_sample(f.run_id, make_sample("aaaaaaaaaaaa", 0)));
}

TEST(StoreSamples, FailureAfterTheFirstRowsRollsEverythingBack) {
    Fixture f;
    core::Sample aborted = make_sample("aaaaaaaaaaaa", 0, core::Outcome::aborted);
    ASSERT_TRUE(f.db->add_sample(f.run_id, aborted));

    // SQLite stores NaN as NULL, which metrics.value refuses: the failure comes after the
    // aborted sample was deleted and the new sample and its lines were inserted.
    core::Sample bad = make_sample("aaaaaaaaaaaa", 0);
    bad.metrics.push_back({"broken", std::numeric_limits<double>::quiet_NaN(), ""});
    auto result = f.db->add_sample(f.run_id, bad);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("INSERT INTO metrics"), std::string::npos)
        << result.error().message;

    auto samples = f.db->samples(f.run_id).value();
    ASSERT_EQ(samples.size(), 1u);
    expect_same(aborted, samples[0]);
}

TEST(StoreConcurrency, SecondConnectionSeesCommittedSamples) {
    Fixture f;
    auto reader = open_ok(f.dir.path() / "results.db");
    ASSERT_TRUE(reader);
    EXPECT_TRUE(reader->samples(f.run_id).value().empty());
    ASSERT_TRUE(f.db->add_sample(f.run_id, make_sample("aaaaaaaaaaaa", 0)));
    auto samples = reader->samples(f.run_id).value();
    ASSERT_EQ(samples.size(), 1u);
    expect_same(make_sample("aaaaaaaaaaaa", 0), samples[0]);
    // And the other way round: the reader may write while the first stays open.
    ASSERT_TRUE(reader->add_sample(f.run_id, make_sample("bbbbbbbbbbbb", 0)));
    EXPECT_EQ(f.db->finished_samples(f.run_id).value().size(), 2u);
}

TEST(StoreConcurrency, TwoProcessesWriteAtOnce) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    int64_t run_id = 0;
    {
        auto db = open_ok(path);
        ASSERT_TRUE(db);
        run_id = db->begin_run(make_run()).value();
        ASSERT_TRUE(db->add_cells(run_id, {make_cell("aaaaaaaaaaaa"), make_cell("bbbbbbbbbbbb")}));
    }
    constexpr int k_samples = 40;
    auto write = [&](Database& db, const std::string& cell_id) {
        for (int repetition = 0; repetition < k_samples; ++repetition)
            if (!db.add_sample(run_id, make_sample(cell_id, repetition)))
                return false;
        return true;
    };

    // Fork before either side opens: an SQLite connection must not cross a fork.
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto db = Database::open(path);
        ::_exit(db && write(**db, "bbbbbbbbbbbb") ? 0 : 1);
    }
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    EXPECT_TRUE(write(*db, "aaaaaaaaaaaa"));
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(db->finished_samples(run_id).value().size(), 2u * k_samples);
}

// A child process that holds the database's write lock (BEGIN EXCLUSIVE) for `hold`, as
// a sqlite3 shell inside a transaction would. Returns once the lock is held. Forked before
// this process opens the file: an SQLite connection must not cross a fork.
pid_t hold_write_lock(const fs::path& path, std::chrono::milliseconds hold) {
    int ready[2];
    if (::pipe(ready) != 0)
        return -1;
    pid_t child = ::fork();
    if (child == 0) {
        sqlite3* db = nullptr;
        bool held = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
                    sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK;
        char answer = held ? 'y' : 'n';
        if (::write(ready[1], &answer, 1) != 1 || !held)
            ::_exit(1);
        ::usleep(static_cast<useconds_t>(hold.count() * 1000));
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
        sqlite3_close(db);
        ::_exit(0);
    }
    char answer = 'n';
    if (child < 0 || ::read(ready[0], &answer, 1) != 1 || answer != 'y')
        ADD_FAILURE() << "the child could not take the write lock";
    ::close(ready[0]);
    ::close(ready[1]);
    return child;
}

void make_database(const fs::path& path) {
    auto db = open_ok(path);
}

// A child process that owns run `run_id` and bisect `bisect_id` of the database at `path`
// (Database::own_run, own_bisect) until it is killed, as a running rig does. Returns once
// both are held. Forked before this process opens the file.
pid_t own_in_child(const fs::path& path, int64_t run_id, int64_t bisect_id) {
    int ready[2];
    if (::pipe(ready) != 0)
        return -1;
    pid_t child = ::fork();
    if (child == 0) {
        auto db = Database::open(path);
        if (!db)
            ::_exit(1);
        auto run = (*db)->own_run(run_id);
        auto bisect = (*db)->own_bisect(bisect_id);
        char answer = run && *run && bisect && *bisect ? 'y' : 'n';
        if (::write(ready[1], &answer, 1) != 1 || answer != 'y')
            ::_exit(1);
        for (;;)
            ::pause();
    }
    char answer = 'n';
    if (child < 0 || ::read(ready[0], &answer, 1) != 1 || answer != 'y')
        ADD_FAILURE() << "the child could not own the run and the bisect";
    ::close(ready[0]);
    ::close(ready[1]);
    return child;
}

TEST(StoreOwners, ARunningRunOrBisectWhoseRigDiedReadsAsInterruptedAndNothingIsWritten) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    int64_t run_id = 0, bisect_id = 0;
    {
        auto db = open_ok(path);
        ASSERT_TRUE(db);
        run_id = db->begin_run(make_run()).value();
        BisectInfo bisect;
        bisect.run_id = run_id;
        bisect.good = "g";
        bisect.bad = "b";
        bisect_id = db->begin_bisect(bisect).value();
        // Never owned (a rig before owner locks, or a copied database): as stored.
        EXPECT_EQ(db->run(run_id).value()->status, core::RunStatus::running);
        EXPECT_EQ(db->bisect(bisect_id).value()->status, core::BisectStatus::running);
    }
    pid_t owner = own_in_child(path, run_id, bisect_id);
    ASSERT_GT(owner, 0);
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    // Its rig lives: running, and nobody else may take it over.
    EXPECT_EQ(db->run(run_id).value()->status, core::RunStatus::running);
    EXPECT_EQ(db->runs().value().at(0).status, core::RunStatus::running);
    EXPECT_EQ(db->bisect(bisect_id).value()->status, core::BisectStatus::running);
    EXPECT_EQ(db->bisects().value().at(0).status, core::BisectStatus::running);
    EXPECT_FALSE(db->own_run(run_id).value().has_value());
    EXPECT_FALSE(db->own_bisect(bisect_id).value().has_value());

    // kill -9: the kernel drops the locks, and every read says interrupted.
    ::kill(owner, SIGKILL);
    ASSERT_EQ(::waitpid(owner, nullptr, 0), owner);
    EXPECT_EQ(db->run(run_id).value()->status, core::RunStatus::interrupted);
    EXPECT_EQ(db->runs().value().at(0).status, core::RunStatus::interrupted);
    EXPECT_EQ(db->last_unfinished_run().value()->status, core::RunStatus::interrupted);
    EXPECT_EQ(db->bisect(bisect_id).value()->status, core::BisectStatus::interrupted);
    EXPECT_EQ(db->bisects().value().at(0).status, core::BisectStatus::interrupted);
    // Read, not written: the stored word is still running.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT status FROM runs", -1, &statement, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(statement), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)), "running");
    sqlite3_finalize(statement);
    sqlite3_close(raw);

    // A rig that takes it over owns it, and it reads as running again.
    auto resumed = db->own_run(run_id).value();
    ASSERT_TRUE(resumed.has_value());
    EXPECT_EQ(db->run(run_id).value()->status, core::RunStatus::running);
    EXPECT_TRUE(fs::exists(dir.path() / "results.db-owners" / "run-1"));
}

// A run or bisect begun with its owner: the lock is held before the row is committed, so
// a rig killed at any moment after leaves rows that read interrupted, never a running
// one without a lock file.
TEST(StoreOwners, ARowBegunWithItsOwnerIsOwnedFromItsFirstRead) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    int64_t run_id = 0, bisect_id = 0;
    {
        std::optional<util::FileLock> run_owner, bisect_owner;
        run_id = db->begin_run(make_run(), &run_owner).value();
        ASSERT_TRUE(run_owner.has_value());
        BisectInfo bisect;
        bisect.run_id = run_id;
        bisect_id = db->begin_bisect(bisect, &bisect_owner).value();
        ASSERT_TRUE(bisect_owner.has_value());
        EXPECT_EQ(db->run(run_id).value()->status, core::RunStatus::running);
        EXPECT_EQ(db->bisect(bisect_id).value()->status, core::BisectStatus::running);
        EXPECT_FALSE(db->own_run(run_id).value().has_value());
    }
    // The owners are gone, as after a kill.
    EXPECT_EQ(db->run(run_id).value()->status, core::RunStatus::interrupted);
    EXPECT_EQ(db->bisect(bisect_id).value()->status, core::BisectStatus::interrupted);
}

TEST(StoreLockWait, AWriteWaitsForAnotherProcessAndSaysWhoHoldsTheLock) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    make_database(path);
    pid_t holder = hold_write_lock(path, std::chrono::milliseconds(1500));
    ASSERT_GT(holder, 0);
    // Opening a current database writes nothing, so it does not wait.
    auto started = std::chrono::steady_clock::now();
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1000));
    std::vector<std::string> notices;
    LockWait wait;
    wait.patience = std::chrono::milliseconds(200);
    wait.notice = [&](const std::string& message) { notices.push_back(message); };
    db->wait_for_locks(wait);
    auto run_id = db->begin_run(make_run());
    EXPECT_TRUE(run_id) << run_id.error().message;
    EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1400));
    ASSERT_EQ(notices.size(), 1u);
    EXPECT_NE(notices[0].find(": process " + std::to_string(holder) + " ("), std::string::npos)
        << notices[0];
    EXPECT_NE(notices[0].find(path.string()), std::string::npos) << notices[0];
    int status = 0;
    ASSERT_EQ(::waitpid(holder, &status, 0), holder);
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(StoreLockWait, StopEndsTheWaitAsInterruptedAndWritesNothing) {
    TempDir dir;
    auto path = dir.path() / "results.db";
    make_database(path);
    pid_t holder = hold_write_lock(path, std::chrono::seconds(30));
    ASSERT_GT(holder, 0);
    auto db = open_ok(path);
    ASSERT_TRUE(db);
    std::atomic<bool> stop{false};
    LockWait wait;
    wait.patience = std::chrono::milliseconds(100);
    wait.notice = [&](const std::string&) { stop = true; };
    wait.stop = &stop;
    db->wait_for_locks(wait);
    auto run_id = db->begin_run(make_run());
    ::kill(holder, SIGKILL);
    ::waitpid(holder, nullptr, 0);
    ASSERT_FALSE(run_id);
    EXPECT_EQ(run_id.error().kind, ErrorKind::interrupted) << run_id.error().message;
    EXPECT_TRUE(db->runs().value().empty());
}

TEST(StoreKernelArtifacts, AddFindAndUpdate) {
    TempDir dir;
    auto db = open_ok(dir.path() / "results.db");
    ASSERT_TRUE(db);
    EXPECT_FALSE(db->find_kernel_artifact("missing").value());

    KernelArtifact artifact;
    artifact.cache_key = "key-1";
    artifact.source = core::KernelSource::git;
    artifact.name = "mainline";
    artifact.release = "6.9.0-rc1";
    artifact.commit = "0123456789abcdef";
    artifact.config_hash = "cfg";
    artifact.compiler = "gcc (Debian 12.2.0-14) 12.2.0";
    artifact.image_sha256 = "sha";
    artifact.image_path = "/cache/key-1/bzImage";
    artifact.modules_path = "/cache/key-1/modules";
    int64_t id = db->add_kernel_artifact(artifact).value();

    auto found = db->find_kernel_artifact("key-1").value();
    ASSERT_TRUE(found);
    EXPECT_EQ(found->id, id);
    EXPECT_EQ(found->source, core::KernelSource::git);
    EXPECT_EQ(found->name, artifact.name);
    EXPECT_EQ(found->release, artifact.release);
    EXPECT_EQ(found->package, "");
    EXPECT_EQ(found->commit, artifact.commit);
    EXPECT_EQ(found->config_hash, artifact.config_hash);
    EXPECT_EQ(found->compiler, artifact.compiler);
    EXPECT_EQ(found->image_sha256, artifact.image_sha256);
    EXPECT_EQ(found->image_path, artifact.image_path);
    EXPECT_EQ(found->modules_path, artifact.modules_path);
    EXPECT_FALSE(found->created_at.empty());

    // Rebuilt after the cache was purged: same key, same row, new paths.
    artifact.image_path = "/cache2/key-1/bzImage";
    artifact.created_at = "2024-06-01T00:00:00Z";
    EXPECT_EQ(db->add_kernel_artifact(artifact).value(), id);
    found = db->find_kernel_artifact("key-1").value();
    ASSERT_TRUE(found);
    EXPECT_EQ(found->image_path, artifact.image_path);
    EXPECT_EQ(found->created_at, artifact.created_at);

    KernelArtifact debian;
    debian.cache_key = "key-2";
    debian.package = "linux-image-6.1.0-18-amd64";
    debian.package_version = "6.1.76-1";
    EXPECT_NE(db->add_kernel_artifact(debian).value(), id);
    EXPECT_EQ(db->find_kernel_artifact("key-2").value()->source, core::KernelSource::debian);
}

TEST(StoreKernelArtifacts, EveryFieldOfTheListRoundTrips) {
    TempDir dir;
    auto db = open_ok(dir.path() / "results.db");
    ASSERT_TRUE(db);
    KernelArtifact artifact;
    artifact.cache_key = "key";
    artifact.source = core::KernelSource::image;
    artifact.name = "name";
    artifact.release = "release";
    artifact.package = "package";
    artifact.package_version = "version";
    artifact.commit = "commit";
    artifact.config_hash = "config";
    artifact.compiler = "compiler";
    artifact.image_sha256 = "sha";
    artifact.image_path = "/image";
    artifact.modules_path = "/modules";
    artifact.created_at = "2024-06-01T00:00:00Z";
    ASSERT_EQ(test::fields_left_default(artifact), "");
    db->add_kernel_artifact(artifact).value();
    auto found = db->find_kernel_artifact("key").value();
    ASSERT_TRUE(found);
    EXPECT_EQ(test::fields_differing(*found, artifact), "");
    // A second artifact of the key replaces every column.
    KernelArtifact other;
    other.cache_key = "key";
    other.created_at = "2025-01-01T00:00:00Z";
    db->add_kernel_artifact(other).value();
    EXPECT_EQ(test::fields_differing(db->find_kernel_artifact("key").value().value(), other), "");
    EXPECT_EQ(db->kernel_artifacts().value().size(), 1u);
}

TEST(StoreCells, ACellIsStoredWholeAndReadBackWithItsKey) {
    Fixture f;
    const int64_t run = f.db->begin_run(make_run()).value();
    core::CellRecord record;
    record.cell = make_cell("aaaaaaaaaaaa");
    record.cell.key = "kkkkkkkkkkkk";
    record.kernel.name = "stable";
    record.kernel.source = core::KernelSource::git;
    record.commit = std::string(40, 'c');
    record.patches = {{"fix.patch", "s", "From: t\n"}};
    ASSERT_TRUE(f.db->add_cells(run, std::vector<core::CellRecord>{record}));
    auto records = f.db->cell_records(run);
    ASSERT_TRUE(records) << records.error().message;
    ASSERT_TRUE(*records);
    ASSERT_EQ((*records)->size(), 1u);
    EXPECT_EQ(core::encode((*records)->front()), core::encode(record));
    EXPECT_EQ(f.db->cells(run).value().front().key, "kkkkkkkkkkkk");

    // A cell stored without its record (before schema v8): the run has no records.
    ASSERT_TRUE(f.db->add_cells(run, {make_cell("bbbbbbbbbbbb")}));
    EXPECT_FALSE(f.db->cell_records(run).value());
}

// A database's per-cell aggregates as text, one line per row, sorted.
std::vector<std::string> aggregates_of(Database& db, int64_t run_id) {
    std::vector<std::string> out;
    EXPECT_TRUE(db.outcome_tallies({run_id}, [&](const OutcomeTally& t) {
        out.push_back(t.cell_id + " " + std::string(core::to_string(t.outcome)) + " msize " +
                      std::to_string(t.msize_negotiated.value_or(0)) + " " + t.cache_negotiated +
                      ": " + std::to_string(t.samples) + " samples, " + std::to_string(t.errors) +
                      " errors, " + std::to_string(t.warnings) + " warnings, " +
                      std::to_string(t.with_errors) + " with errors");
    }));
    FigureSelection every;
    every.metric_prefixes = {""};
    EXPECT_TRUE(db.figure_counts({run_id}, every, [&](const FigureCount& c) {
        out.push_back(c.cell_id + " " + std::string(core::to_string(c.figure)) + " " + c.name +
                      " " + std::to_string(c.value) + " " + c.unit + " x" +
                      std::to_string(c.count));
    }));
    std::sort(out.begin(), out.end());
    return out;
}

// Samples of both cells: repeats, a failure whose figures do not count, an aborted one
// that a later sample replaces.
void add_aggregated_samples(Database& db, int64_t run_id) {
    for (int repetition = 0; repetition < 3; ++repetition) {
        core::Sample sample = make_sample("aaaaaaaaaaaa", repetition);
        sample.guest_seconds = repetition == 2 ? 2.5 : 1.5;
        EXPECT_TRUE(db.add_sample(run_id, sample));
    }
    core::Sample failed = make_sample("aaaaaaaaaaaa", 3, core::Outcome::workload_failed);
    failed.error_count = 2;
    EXPECT_TRUE(db.add_sample(run_id, failed));
    core::Sample aborted = make_sample("bbbbbbbbbbbb", 0, core::Outcome::aborted);
    aborted.msize_negotiated.reset();
    EXPECT_TRUE(db.add_sample(run_id, aborted));
    core::Sample replacing = make_sample("bbbbbbbbbbbb", 0, core::Outcome::errors);
    replacing.wall_seconds = 0; // the host did not time it: no CPU figure
    EXPECT_TRUE(db.add_sample(run_id, replacing));
}

TEST(StoreAggregates, EverySampleCountsInItsCellAndAMigrationFillsTheSameFromTheSamples) {
    Fixture f;
    add_aggregated_samples(*f.db, f.run_id);
    const std::vector<std::string> want{
        "aaaaaaaaaaaa cpu  12.500000 % x3",
        "aaaaaaaaaaaa duration  1.500000 s x2",
        "aaaaaaaaaaaa duration  2.500000 s x1",
        "aaaaaaaaaaaa metric compile_seconds 1.250000 s x3",
        "aaaaaaaaaaaa metric files 40.000000  x3",
        "aaaaaaaaaaaa ok msize 65536 loose: 3 samples, 3 errors, 3 warnings, 3 with errors",
        "aaaaaaaaaaaa workload-failed msize 65536 loose: 1 samples, 2 errors, 1 warnings, 1 "
        "with errors",
        "bbbbbbbbbbbb duration  1.500000 s x1",
        "bbbbbbbbbbbb errors msize 65536 loose: 1 samples, 1 errors, 1 warnings, 1 with errors",
        "bbbbbbbbbbbb metric compile_seconds 1.250000 s x1",
        "bbbbbbbbbbbb metric files 40.000000  x1",
    };
    EXPECT_EQ(aggregates_of(*f.db, f.run_id), want) << "the aborted sample's count went with it";

    // A database from before the aggregates: the migration reads them off its samples.
    TempDir dir;
    const fs::path path = dir.path() / "old.db";
    {
        auto db = open_ok(path);
        const int64_t run_id = db->begin_run(make_run()).value();
        ASSERT_TRUE(db->add_cells(run_id, {make_cell("aaaaaaaaaaaa"), make_cell("bbbbbbbbbbbb")}));
        add_aggregated_samples(*db, run_id);
    }
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
    EXPECT_EQ(
        sqlite3_exec(
            handle,
            "DROP TABLE cell_outcomes; DROP TABLE cell_values; "
            "ALTER TABLE samples DROP COLUMN outputs; ALTER TABLE samples DROP COLUMN machine; "
            "PRAGMA user_version = 9",
            nullptr, nullptr, nullptr),
        SQLITE_OK)
        << sqlite3_errmsg(handle);
    sqlite3_close(handle);
    auto migrated = open_ok(path);
    ASSERT_TRUE(migrated);
    EXPECT_EQ(migrated->schema_version(), Database::latest_schema_version());
    EXPECT_EQ(aggregates_of(*migrated, 1), want);
    // The kernel artifact each sample ran on is taken too: the run's Debian packages.
    KernelArtifact artifact;
    artifact.cache_key = "artifact-key";
    artifact.source = core::KernelSource::debian;
    artifact.package = "linux-image-6.1.0-28-amd64";
    artifact.package_version = "6.1.119-1";
    ASSERT_TRUE(migrated->add_kernel_artifact(artifact));
    auto migrated_packages = migrated->kernel_packages({1}).value();
    ASSERT_EQ(migrated_packages.size(), 1u);
    EXPECT_EQ(migrated_packages[0].samples, 5);

    // The packages the run's kernels resolved to come from the aggregates too.
    artifact.cache_key = "artifact-key";
    artifact.source = core::KernelSource::debian;
    artifact.package = "linux-image-6.1.0-28-amd64";
    artifact.package_version = "6.1.119-1";
    ASSERT_TRUE(f.db->add_kernel_artifact(artifact));
    auto packages = f.db->kernel_packages({f.run_id}).value();
    ASSERT_EQ(packages.size(), 1u);
    EXPECT_EQ(packages[0].package, artifact.package);
    EXPECT_EQ(packages[0].package_version, artifact.package_version);
    EXPECT_EQ(packages[0].samples, 5) << "every stored sample, the aborted one replaced";

    // A prefix reads only its metrics, and each once however the prefixes overlap.
    std::vector<std::string> names;
    FigureSelection some;
    some.metric_prefixes = {"files", "f", "compile_seconds"};
    ASSERT_TRUE(f.db->figure_counts({f.run_id}, some, [&](const FigureCount& c) {
        if (c.cell_id == "aaaaaaaaaaaa")
            names.push_back(c.name);
    }));
    EXPECT_EQ(names, (std::vector<std::string>{"", "", "", "compile_seconds", "files"}));
    // One cell's one figure.
    FigureSelection one;
    one.timed = {core::Figure::duration};
    one.cell_id = "bbbbbbbbbbbb";
    std::vector<double> durations;
    ASSERT_TRUE(f.db->figure_counts({f.run_id}, one, [&](const FigureCount& c) {
        EXPECT_EQ(c.cell_id, one.cell_id);
        durations.push_back(c.value);
    }));
    EXPECT_EQ(durations, std::vector<double>{1.5});
}

} // namespace
} // namespace rig::store
