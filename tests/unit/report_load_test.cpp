// SPDX-License-Identifier: MIT
// Tests of report/load and the store queries behind it: selection of runs and cells,
// filters, sample summaries, metrics and error signatures with their first occurrence.
#include "report/load.hpp"
#include "report/render.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

using namespace rig;

namespace {

core::Cell make(const std::string& id, const std::string& kernel, const std::string& cache) {
    core::Cell cell;
    cell.id = id;
    cell.kernel_name = kernel;
    cell.config = "debian";
    cell.params = {{"fs", "9p"}, {"msize", "4186112"}, {"cache", cache}};
    cell.canonical = id;
    return cell;
}

core::Sample sample(const std::string& cell, int repetition, double seconds) {
    core::Sample s;
    s.cell_id = cell;
    s.repetition = repetition;
    s.outcome = core::Outcome::ok;
    s.guest_seconds = seconds;
    s.wall_seconds = seconds;
    s.host_cpu_percent = 50;
    s.msize_negotiated = 512000;
    s.cache_negotiated = "loose";
    return s;
}

class Load : public ::testing::Test {
protected:
    void SetUp() override {
        auto opened = store::Database::open(m_dir.path() / "rig.db");
        ASSERT_TRUE(opened) << opened.error().message;
        m_db = std::move(*opened);
        store::RunInfo run;
        run.scenario_name = "s";
        m_run = *m_db->begin_run(run);
        ASSERT_TRUE(m_db->add_cells(m_run, {make("aaaa00000001", "old", "loose"),
                                            make("bbbb00000002", "new", "loose"),
                                            make("cccc00000003", "new", "mmap")}));
        ASSERT_TRUE(m_db->add_sample(m_run, sample("aaaa00000001", 0, 10)));
        ASSERT_TRUE(m_db->add_sample(m_run, sample("aaaa00000001", 1, 12)));
        auto failing = sample("bbbb00000002", 0, 0);
        failing.outcome = core::Outcome::workload_failed;
        failing.error_count = 3;
        failing.lines = {
            {core::Severity::error, "workload", "x.c:1: error: EBADF 7", "x.c:N: error: EBADF N"},
            {core::Severity::error, "workload", "x.c:2: error: EBADF 8", "x.c:N: error: EBADF N"},
            {core::Severity::warning, "console", "[ 1.0] 9pnet: odd", "9pnet: odd"}};
        failing.evidence = "one\ntwo\nthree\nx.c:1: error: EBADF 7\nfour\n";
        ASSERT_TRUE(m_db->add_sample(m_run, failing));
        auto second = sample("bbbb00000002", 1, 20);
        second.outcome = core::Outcome::errors;
        second.error_count = 1;
        second.lines = {
            {core::Severity::error, "console", "x.c:9: error: EBADF 1", "x.c:N: error: EBADF N"}};
        ASSERT_TRUE(m_db->add_sample(m_run, second));
        // A second run, which must not leak into the first one's report.
        m_other = *m_db->begin_run(run);
        ASSERT_TRUE(m_db->add_cells(m_other, {make("aaaa00000001", "old", "loose")}));
        ASSERT_TRUE(m_db->add_sample(m_other, sample("aaaa00000001", 0, 99)));
    }

    // A third run whose old cell has three samples with metrics (stored out of name
    // order), and whose new cell has one sample without and a failed one with a count.
    int64_t add_counted_run() {
        store::RunInfo run;
        run.scenario_name = "counted";
        int64_t counted = *m_db->begin_run(run);
        EXPECT_TRUE(m_db->add_cells(
            counted, {make("aaaa00000001", "old", "loose"), make("bbbb00000002", "new", "loose")}));
        for (int repetition = 0; repetition < 3; ++repetition) {
            auto s = sample("aaaa00000001", repetition, 10);
            s.metrics = {{"9p.work.walk", 40.0 + repetition, "requests"},
                         {"9p.work.requests", 100.0 + repetition, "requests"},
                         {"noop/seconds", 0.5, "s"}};
            EXPECT_TRUE(m_db->add_sample(counted, s));
        }
        EXPECT_TRUE(m_db->add_sample(counted, sample("bbbb00000002", 0, 12)));
        auto failed = sample("bbbb00000002", 1, 0);
        failed.outcome = core::Outcome::workload_failed;
        failed.metrics = {{"9p.work.requests", 7, "requests"}};
        EXPECT_TRUE(m_db->add_sample(counted, failed));
        return counted;
    }

    // The metric names figure_counts reads of each cell, by cell id.
    std::map<std::string, std::vector<std::string>>
    names_read(int64_t run, const std::vector<std::string>& prefixes) {
        std::map<std::string, std::vector<std::string>> out;
        store::FigureSelection selection;
        selection.timed.clear();
        selection.metric_prefixes = prefixes;
        auto read = m_db->figure_counts({run}, selection, [&](const store::FigureCount& row) {
            auto& names = out[row.cell_id];
            if (names.empty() || names.back() != row.name)
                names.push_back(row.name);
        });
        EXPECT_TRUE(read) << read.error().message;
        return out;
    }

    test::TempDir m_dir;
    std::unique_ptr<store::Database> m_db;
    int64_t m_run = 0;
    int64_t m_other = 0;
};

} // namespace

TEST_F(Load, TheAggregatesOfSeveralRuns) {
    int64_t samples = 0;
    auto count = [&](const store::OutcomeTally& tally) { samples += tally.samples; };
    ASSERT_TRUE(m_db->outcome_tallies({m_run, m_other}, count));
    EXPECT_EQ(samples, 5);
    std::vector<store::OutcomeTally> tallies;
    ASSERT_TRUE(m_db->outcome_tallies(
        {m_other}, [&](const store::OutcomeTally& tally) { tallies.push_back(tally); }));
    ASSERT_EQ(tallies.size(), 1u);
    EXPECT_EQ(tallies.front().samples, 1);
    EXPECT_EQ(tallies.front().msize_negotiated, 512000u);
    EXPECT_EQ(tallies.front().outcome, core::Outcome::ok);
    EXPECT_EQ(tallies.front().cell_id, "aaaa00000001");
    std::vector<double> durations;
    ASSERT_TRUE(m_db->figure_counts({m_other}, {}, [&](const store::FigureCount& row) {
        if (row.figure == core::Figure::duration)
            durations.push_back(row.value);
    }));
    EXPECT_EQ(durations, std::vector<double>{99});
}

TEST_F(Load, SignatureCountsWithFirstOccurrence) {
    auto counts = m_db->signature_counts({m_run});
    ASSERT_TRUE(counts) << counts.error().message;
    ASSERT_EQ(counts->size(), 2u);
    const auto& ebadf = (*counts)[0];
    EXPECT_EQ(ebadf.cell_id, "bbbb00000002");
    EXPECT_EQ(ebadf.signature, "x.c:N: error: EBADF N");
    EXPECT_EQ(ebadf.lines, 3);
    EXPECT_EQ(ebadf.samples, 2);
    EXPECT_EQ(ebadf.line, "x.c:1: error: EBADF 7");
    EXPECT_EQ(ebadf.repetition, 0);
    EXPECT_EQ(ebadf.source, "workload");
    EXPECT_EQ((*counts)[1].severity, core::Severity::warning);
    EXPECT_TRUE(m_db->signature_counts({m_other})->empty());
}

TEST_F(Load, DefaultIsTheNewestRun) {
    auto data = report::load(*m_db, {});
    ASSERT_TRUE(data) << data.error().message;
    ASSERT_EQ(data->runs.size(), 1u);
    EXPECT_EQ(data->runs[0].id, m_other);
    ASSERT_EQ(data->cells.size(), 1u);
    EXPECT_EQ(data->cells[0].duration.median, 99);
}

TEST_F(Load, SummariesAndSignatures) {
    report::Selection selection;
    selection.runs = {m_run};
    selection.signatures = report::Signatures::load;
    auto data = report::load(*m_db, selection);
    ASSERT_TRUE(data) << data.error().message;
    ASSERT_EQ(data->cells.size(), 3u);
    const auto& old = data->cells[0];
    EXPECT_EQ(old.samples, 2u);
    EXPECT_EQ(old.duration.n, 2u);
    EXPECT_DOUBLE_EQ(old.duration.median, 11);
    EXPECT_EQ(old.msize_negotiated, 512000u);
    EXPECT_TRUE(old.cache_negotiated.empty()) << "loose was asked for and granted";
    const auto& broken = data->cells[1];
    EXPECT_EQ(broken.samples, 2u);
    EXPECT_EQ(broken.duration.n, 1u) << "a failed compile has no duration";
    EXPECT_EQ(broken.errors, 4);
    EXPECT_EQ(broken.samples_with_errors, 2);
    EXPECT_EQ(broken.outcomes.at("workload-failed"), 1);
    EXPECT_EQ(data->cells[2].samples, 0u);

    ASSERT_EQ(data->signatures.size(), 2u);
    const auto& group = data->signatures[0];
    EXPECT_EQ(group.severity, core::Severity::error);
    EXPECT_EQ(group.lines, 3);
    ASSERT_EQ(group.cells.size(), 1u);
    EXPECT_EQ(group.cells[0].cell, 1u);
    // Two lines before, three after, the line itself marked.
    EXPECT_EQ(group.cells[0].excerpt, "  two\n  three\n> x.c:1: error: EBADF 7\n  four\n");
    // No evidence and no log on disk: the line alone.
    EXPECT_EQ(data->signatures[1].cells[0].excerpt, "> [ 1.0] 9pnet: odd\n");
}

// A workload that stopped at a failing command printed no line rig recognises, and a
// sample rig could not run stored only its reason: `rig report --errors` shows each with
// the last lines it printed, and the table notes say why.
TEST_F(Load, FailuresWithoutErrorLinesShowTheirLastOutput) {
    store::RunInfo info;
    info.scenario_name = "quiet";
    const int64_t run = *m_db->begin_run(info);
    ASSERT_TRUE(m_db->add_cells(
        run, {make("aaaa00000001", "old", "loose"), make("bbbb00000002", "new", "loose")}));
    for (int repetition = 0; repetition < 3; ++repetition) {
        auto failed = sample("aaaa00000001", repetition, 0);
        failed.outcome = core::Outcome::workload_failed;
        failed.evidence = "workload output (tail):\ncc -c a.c\n./check: digest " +
                          std::to_string(repetition) + " differs\n";
        ASSERT_TRUE(m_db->add_sample(run, failed));
    }
    auto infra = sample("bbbb00000002", 0, 0);
    infra.outcome = core::Outcome::infra_error;
    infra.evidence = "qemu cannot open /results: Permission denied\nconsole (tail):\n";
    ASSERT_TRUE(m_db->add_sample(run, infra));
    // Explained by its own error line: the signatures say why.
    auto loud = sample("bbbb00000002", 1, 0);
    loud.outcome = core::Outcome::workload_failed;
    loud.error_count = 1;
    loud.lines = {{core::Severity::error, "workload", "a.c: EBADF", "a.c: EBADF"}};
    loud.evidence = "workload output (tail):\na.c: EBADF\n";
    ASSERT_TRUE(m_db->add_sample(run, loud));
    ASSERT_TRUE(m_db->add_sample(run, sample("bbbb00000002", 2, 10)));

    report::Selection selection;
    selection.runs = {run};
    selection.signatures = report::Signatures::load;
    auto data = report::load(*m_db, selection);
    ASSERT_TRUE(data) << data.error().message;
    ASSERT_EQ(data->failures.size(), 2u);
    const report::Failure& quiet = data->failures[0];
    EXPECT_EQ(quiet.cell, 0u);
    EXPECT_EQ(quiet.outcome, core::Outcome::workload_failed);
    EXPECT_EQ(quiet.samples, 3);
    EXPECT_EQ(quiet.repetition, 0);
    EXPECT_EQ(quiet.why, "last output: ./check: digest 0 differs");
    EXPECT_EQ(quiet.last_output,
              (std::vector<std::string>{"cc -c a.c", "./check: digest 0 differs"}));
    EXPECT_EQ(data->failures[1].why, "qemu cannot open /results: Permission denied");
    EXPECT_EQ(data->cells[0].why, (std::vector<std::string>{
                                      "workload-failed (last output: ./check: digest 0 differs)"}));

    report::RenderOptions options;
    options.view = report::View::errors;
    auto text = report::render(*data, options);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("failed without an error line\n"
                         "  A) old debian cache=loose fs=9p msize=4186112: workload-failed in 3/3; "
                         "first in sample #0\n"
                         "      | cc -c a.c\n"
                         "      | ./check: digest 0 differs\n"),
              std::string::npos)
        << *text;
    EXPECT_NE(text->find("infra-error in 1/3"), std::string::npos) << *text;
    EXPECT_NE(text->find("error  1 line in 1 sample, 1 cell: a.c: EBADF"), std::string::npos)
        << *text;
    options.format = report::Format::json;
    text = report::render(*data, options);
    ASSERT_TRUE(text);
    EXPECT_NE(text->find("\"why\": \"last output: ./check: digest 0 differs\""), std::string::npos)
        << *text;
    options.format = report::Format::csv;
    text = report::render(*data, options);
    ASSERT_TRUE(text);
    EXPECT_NE(text->find("failed,workload-failed,A,"), std::string::npos) << *text;

    // The default table reads no evidence; it leaves the failures alone.
    selection.signatures = report::Signatures::skip;
    data = report::load(*m_db, selection);
    ASSERT_TRUE(data);
    EXPECT_TRUE(data->failures.empty());
}

TEST_F(Load, ExcerptFromTheConsoleLogOnDisk) {
    auto log_dir = m_dir.path() / "runs" / std::to_string(m_run) / "bbbb00000002" / "0";
    std::filesystem::create_directories(log_dir);
    std::ofstream(log_dir / "console.log") << "boot\n[ 1.0] 9pnet: odd\nmore\n";
    report::Selection selection;
    selection.runs = {m_run};
    selection.signatures = report::Signatures::load;
    selection.runs_dir = m_dir.path() / "runs";
    auto data = report::load(*m_db, selection);
    ASSERT_TRUE(data);
    EXPECT_EQ(data->signatures[1].cells[0].excerpt, "  boot\n> [ 1.0] 9pnet: odd\n  more\n");
}

TEST_F(Load, Filters) {
    report::Selection selection;
    selection.runs = {m_run, m_other};
    selection.where = {{"kernel", "new"}};
    auto data = report::load(*m_db, selection);
    ASSERT_TRUE(data);
    EXPECT_EQ(data->cells.size(), 2u);

    selection.where = {{"kernel", "new"}, {"cache", "mmap"}};
    EXPECT_EQ(report::load(*m_db, selection)->cells.size(), 1u);
    selection.where = {{"cache", "mmap"}, {"cache", "loose"}, {"run", std::to_string(m_run)}};
    EXPECT_EQ(report::load(*m_db, selection)->cells.size(), 3u);

    selection.where = {};
    selection.cells = {"aaaa"};
    data = report::load(*m_db, selection);
    ASSERT_TRUE(data);
    ASSERT_EQ(data->cells.size(), 2u) << "one per run";
    EXPECT_EQ(data->cells[1].run_id, m_other);
}

TEST_F(Load, ClearErrors) {
    report::Selection selection;
    selection.runs = {4242};
    EXPECT_EQ(report::load(*m_db, selection).error().kind, ErrorKind::usage);
    selection.runs = {m_run};
    selection.where = {{"colour", "red"}};
    auto bad = report::load(*m_db, selection);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("unknown key 'colour'"), std::string::npos);
    EXPECT_NE(bad.error().message.find("cache"), std::string::npos) << "lists the known keys";
    selection.where = {{"kernel", "nope"}};
    EXPECT_FALSE(report::load(*m_db, selection));
    selection.where = {};
    selection.cells = {"ffff"};
    EXPECT_FALSE(report::load(*m_db, selection));
}

TEST_F(Load, MetricsCountOnlyInMeasuredSamples) {
    int64_t counted = add_counted_run();
    std::vector<std::string> rows;
    store::FigureSelection every;
    every.metric_prefixes = {""};
    ASSERT_TRUE(m_db->figure_counts({counted}, every, [&](const store::FigureCount& row) {
        if (row.figure == core::Figure::metric)
            rows.push_back(row.cell_id + " " + row.name + " " + std::to_string(row.value) + " " +
                           row.unit + " x" + std::to_string(row.count));
    }));
    EXPECT_EQ(rows, (std::vector<std::string>{
                        "aaaa00000001 9p.work.requests 100.000000 requests x1",
                        "aaaa00000001 9p.work.requests 101.000000 requests x1",
                        "aaaa00000001 9p.work.requests 102.000000 requests x1",
                        "aaaa00000001 9p.work.walk 40.000000 requests x1",
                        "aaaa00000001 9p.work.walk 41.000000 requests x1",
                        "aaaa00000001 9p.work.walk 42.000000 requests x1",
                        "aaaa00000001 noop/seconds 0.500000 s x3",
                    }))
        << "by name, each name's values in order; the failed sample's count is not there";

    report::Selection selection;
    selection.runs = {counted};
    auto data = report::load(*m_db, selection);
    ASSERT_TRUE(data) << data.error().message;
    const auto* requests = report::find_metric(data->cells[0], "9p.work.requests");
    ASSERT_NE(requests, nullptr);
    EXPECT_EQ(requests->unit, "requests");
    EXPECT_EQ(requests->summary.n, 3u);
    EXPECT_DOUBLE_EQ(requests->summary.median, 101);
    EXPECT_DOUBLE_EQ(requests->summary.stddev, 1);
    EXPECT_EQ(report::find_metric(data->cells[1], "9p.work.requests"), nullptr)
        << "a failed workload's partial count is not a figure, and no count is not 0";
}

TEST_F(Load, MetricPrefixesReadOnlyWhatIsAsked) {
    int64_t counted = add_counted_run();
    using Names = std::map<std::string, std::vector<std::string>>;
    const std::string cell = "aaaa00000001";
    const std::vector<std::string> all{"9p.work.requests", "9p.work.walk", "noop/seconds"};
    EXPECT_EQ(names_read(counted, {""}), (Names{{cell, all}}));
    EXPECT_EQ(names_read(counted, {}), Names{});
    const std::vector<std::string> work{"9p.work.requests", "9p.work.walk"};
    EXPECT_EQ(names_read(counted, {"9p.work."}), (Names{{cell, work}}));
    EXPECT_EQ(names_read(counted, {"noop/seconds", "9p.work.walk"}),
              (Names{{cell, {"9p.work.walk", "noop/seconds"}}}));
    // Overlapping prefixes read a metric once.
    EXPECT_EQ(names_read(counted, {"9p.work.walk", "9p.", "9p.work."}), (Names{{cell, work}}));
    EXPECT_EQ(names_read(counted, {"9p.work.wal"}), (Names{{cell, {"9p.work.walk"}}}));
    EXPECT_EQ(*m_db->metric_names({counted}), all);
    EXPECT_TRUE(m_db->metric_names({m_run})->empty());
}

TEST_F(Load, TablesReadOnlyTheMetricsTheyShow) {
    report::Selection selection;
    selection.runs = {add_counted_run()};
    selection.metrics = report::MetricsRead::table;
    auto data = report::load(*m_db, selection);
    ASSERT_TRUE(data) << data.error().message;
    EXPECT_EQ(data->cells[0].metrics.size(), 2u) << "the share's counters";
    EXPECT_TRUE(report::find_metric(data->cells[0], "9p.work.walk"));

    selection.chosen_metrics = {"noop/seconds"};
    data = report::load(*m_db, selection);
    ASSERT_TRUE(data) << data.error().message;
    ASSERT_EQ(data->cells[0].metrics.size(), 1u);
    EXPECT_EQ(data->cells[0].metrics.begin()->first, "noop/seconds");

    selection.metrics = report::MetricsRead::none;
    selection.chosen_metrics = {};
    data = report::load(*m_db, selection);
    ASSERT_TRUE(data) << data.error().message;
    EXPECT_TRUE(data->cells[0].metrics.empty());
    EXPECT_EQ(data->cells[0].duration.n, 3u);
}

TEST_F(Load, AChosenMetricTypoNamesTheMetricMeant) {
    report::Selection selection;
    selection.runs = {add_counted_run()};
    selection.metrics = report::MetricsRead::table;
    selection.chosen_metrics = {"9p.work.requests", "9p.work.wlak"};
    auto data = report::load(*m_db, selection);
    ASSERT_FALSE(data);
    EXPECT_EQ(data.error().kind, ErrorKind::usage);
    EXPECT_EQ(data.error().message,
              "--metric 9p.work.wlak: no selected cell has it; did you mean '9p.work.walk'?");
}

// The report reads the database's per-cell aggregates, not its samples: it must show what
// the samples themselves give (report::from_samples, `rig run`'s own table), to the bit.
TEST_F(Load, TheCellAggregatesGiveWhatTheSamplesThemselvesGive) {
    const int64_t counted = add_counted_run();
    // Repeated and distinct durations, CPU figures and counts, stored in no order, and an
    // aborted sample that a resumed run replaced.
    for (int repetition = 3; repetition < 40; ++repetition) {
        auto s = sample("aaaa00000001", repetition, 9 + 0.1 * ((repetition * 7) % 11));
        s.host_cpu_percent = 40 + repetition % 4;
        s.metrics = {{"9p.work.requests", 100.0 + repetition % 3, "requests"}};
        ASSERT_TRUE(m_db->add_sample(counted, s));
    }
    auto aborted = sample("bbbb00000002", 2, 0);
    aborted.outcome = core::Outcome::aborted;
    ASSERT_TRUE(m_db->add_sample(counted, aborted));
    ASSERT_TRUE(m_db->add_sample(counted, sample("bbbb00000002", 2, 13)));

    for (int64_t run : {m_run, counted}) {
        report::Selection selection;
        selection.runs = {run};
        selection.metrics = report::MetricsRead::all;
        auto loaded = report::load(*m_db, selection);
        ASSERT_TRUE(loaded) << loaded.error().message;
        const report::ReportData direct =
            report::from_samples(*m_db->cells(run), *m_db->samples(run));
        ASSERT_EQ(loaded->cells.size(), direct.cells.size());
        for (size_t i = 0; i < direct.cells.size(); ++i) {
            const report::CellResult& a = loaded->cells[i];
            const report::CellResult& b = direct.cells[i];
            SCOPED_TRACE(b.cell.id + " of run " + std::to_string(run));
            EXPECT_EQ(a.samples, b.samples);
            EXPECT_EQ(a.outcomes, b.outcomes);
            EXPECT_EQ(a.errors, b.errors);
            EXPECT_EQ(a.warnings, b.warnings);
            EXPECT_EQ(a.samples_with_errors, b.samples_with_errors);
            EXPECT_EQ(a.msize_negotiated, b.msize_negotiated);
            EXPECT_EQ(a.cache_negotiated, b.cache_negotiated);
            EXPECT_EQ(a.durations, b.durations);
            EXPECT_EQ(a.cpu_percent, b.cpu_percent);
            EXPECT_EQ(a.duration.mean, b.duration.mean);
            EXPECT_EQ(a.duration.stddev, b.duration.stddev);
            EXPECT_EQ(a.duration.median, b.duration.median);
            EXPECT_EQ(a.cpu.q3, b.cpu.q3);
            ASSERT_EQ(a.metrics.size(), b.metrics.size());
            for (const auto& [name, values] : b.metrics) {
                const report::MetricValues* mine = report::find_metric(a, name);
                ASSERT_NE(mine, nullptr) << name;
                EXPECT_EQ(mine->unit, values.unit);
                EXPECT_EQ(mine->values, values.values) << name;
                EXPECT_EQ(mine->summary.mean, values.summary.mean) << name;
            }
        }
    }
}
