// SPDX-License-Identifier: MIT
// Tests of report/: text and markdown tables, the results table, duration formatting,
// baseline comparisons, pivots, the mmtests marks and every format of the renderer.
#include "report/plan.hpp"
#include "report/render.hpp"
#include "report/results.hpp"
#include "report/table.hpp"
#include "text_lines.hpp"
#include "util/units.hpp"

#include <gtest/gtest.h>
#include <sstream>

using namespace rig;
using namespace rig::report;

namespace {

using rig::test::lines_of;

// Columns as a terminal shows them: one per UTF-8 code point.
size_t columns(std::string_view text) {
    size_t n = 0;
    for (char c : text)
        n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

// The display column at which `needle` starts in `line`.
size_t column_of(const std::string& line, const std::string& needle) {
    size_t at = line.find(needle);
    EXPECT_NE(at, std::string::npos) << needle << " not in: " << line;
    return at == std::string::npos ? 0 : columns(std::string_view(line).substr(0, at));
}

core::Cell cell(std::string id, std::string kernel, std::map<std::string, std::string> params) {
    core::Cell c;
    c.id = std::move(id);
    c.kernel_name = std::move(kernel);
    c.config = "debian";
    c.params = std::move(params);
    return c;
}

core::Sample sample(const std::string& cell_id, core::Outcome outcome, double seconds) {
    core::Sample s;
    s.cell_id = cell_id;
    s.outcome = outcome;
    s.guest_seconds = seconds;
    s.wall_seconds = seconds + 0.5;
    return s;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(Table, TextAlignment) {
    Table table({{"name"}, {"n", Align::right}, {"note"}});
    table.add_row({"a", "1", "x"});
    table.add_row({"bbbbbb", "100", ""});
    EXPECT_EQ(table.rows(), 2u);
    EXPECT_EQ(table.to_text(), "name      n  note\n"
                               "a         1  x\n"
                               "bbbbbb  100\n");
}

TEST(Table, NoTrailingBlanks) {
    Table table({{"left"}, {"last column"}});
    table.add_row({"1", "a"});
    table.add_row({"22", ""});
    for (const auto& line : lines_of(table.to_text())) {
        ASSERT_FALSE(line.empty());
        EXPECT_NE(line.back(), ' ') << "[" << line << "]";
    }
}

TEST(Table, Utf8ArrowIsOneColumn) {
    Table table({{"msize", Align::right}, {"cache"}});
    table.add_row({"4186112→512000", "loose"});
    table.add_row({"8192", "none"});
    auto lines = lines_of(table.to_text());
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(columns(lines[1]), columns("4186112→512000  loose"));
    EXPECT_EQ(lines[2], std::string(10, ' ') + "8192  none");
    EXPECT_EQ(column_of(lines[0], "cache"), column_of(lines[1], "loose"));
    EXPECT_EQ(column_of(lines[1], "loose"), column_of(lines[2], "none"));
}

TEST(Table, Markdown) {
    Table table({{"a|b"}, {"n", Align::right}});
    table.add_row({"x | y", "1"});
    table.add_row({"", "22"});
    EXPECT_EQ(table.to_markdown(), "| a\\|b | n |\n"
                                   "| --- | ---: |\n"
                                   "| x \\| y | 1 |\n"
                                   "|  | 22 |\n");
}

TEST(Results, FormatSeconds) {
    EXPECT_EQ(rig::util::format_duration(0, rig::util::DurationStyle::report), "0.0s");
    EXPECT_EQ(rig::util::format_duration(12.34, rig::util::DurationStyle::report), "12.3s");
    EXPECT_EQ(rig::util::format_duration(59.94, rig::util::DurationStyle::report), "59.9s");
    EXPECT_EQ(rig::util::format_duration(60, rig::util::DurationStyle::report), "1m 0s");
    EXPECT_EQ(rig::util::format_duration(20 * 60 + 40, rig::util::DurationStyle::report),
              "20m 40s");
    EXPECT_EQ(rig::util::format_duration(20 * 60 + 40.4, rig::util::DurationStyle::report),
              "20m 40s");
    EXPECT_EQ(rig::util::format_duration(3599.4, rig::util::DurationStyle::report), "59m 59s");
    EXPECT_EQ(rig::util::format_duration(2 * 3600 + 60, rig::util::DurationStyle::report), "2h 1m");
}

TEST(Results, Cells) {
    std::vector<core::Cell> cells{
        cell("aaaaaaaaaaaa", "debian-6.1",
             {{"fs", "9p"}, {"msize", "4186112"}, {"cache", "loose"}}),
        cell("bbbbbbbbbbbb", "debian-6.1", {{"fs", "9p"}, {"msize", "8192"}, {"cache", "none"}}),
        cell("cccccccccccc", "debian-6.12", {{"fs", "virtiofs"}}),
        cell("dddddddddddd", "debian-6.12", {{"fs", "9p"}, {"cache", "loose"}}),
    };
    std::vector<core::Sample> samples;
    // A: 9pnet limited msize to 512000; three clean runs.
    for (double seconds : {14.0, 10.0, 12.0}) {
        auto s = sample("aaaaaaaaaaaa", core::Outcome::ok, seconds);
        s.msize_negotiated = 512000;
        s.cache_negotiated = "loose";
        s.host_cpu_percent = seconds * 4; // 40, 48, 56: median 48
        samples.push_back(s);
    }
    // B: got what it asked for; one clean, one with errors (still timed), one failed.
    auto b_ok = sample("bbbbbbbbbbbb", core::Outcome::ok, 5);
    b_ok.msize_negotiated = 8192;
    b_ok.cache_negotiated = "none";
    auto b_errors = sample("bbbbbbbbbbbb", core::Outcome::errors, 7);
    b_errors.error_count = 2;
    auto b_failed = sample("bbbbbbbbbbbb", core::Outcome::workload_failed, 1);
    b_failed.error_count = 1;
    b_failed.warning_count = 1;
    samples.insert(samples.begin(), {b_failed, b_ok, b_errors});
    // D: one run, and 6.12's hex spelling already mapped back to "loose".
    auto d = sample("dddddddddddd", core::Outcome::ok, 75);
    d.cache_negotiated = "loose";
    samples.push_back(d);

    std::string text = render_results(cells, samples);
    auto lines = lines_of(text);
    ASSERT_EQ(lines.size(), 5u) << text;
    for (const auto& line : lines)
        EXPECT_NE(line.back(), ' ') << line;
    EXPECT_TRUE(contains(lines[0], "case")) << lines[0];
    EXPECT_TRUE(contains(lines[0], "duration"));
    EXPECT_TRUE(contains(lines[0], "mean ± sd"));

    const std::string& a = lines[1];
    EXPECT_EQ(a.rfind("A)", 0), 0u) << a;
    EXPECT_TRUE(contains(a, "debian-6.1")) << a;
    EXPECT_TRUE(contains(a, "4186112→512000")) << a;
    EXPECT_TRUE(contains(a, "  loose  ")) << a;
    EXPECT_TRUE(contains(a, "12.0s  12.0s ± 2.0s  3")) << a;
    EXPECT_TRUE(contains(a, "~48%")) << a;
    EXPECT_TRUE(contains(a, "  none  ")) << a;
    EXPECT_TRUE(contains(a, "3 ok")) << a;

    const std::string& b = lines[2];
    EXPECT_EQ(b.rfind("B)", 0), 0u) << b;
    EXPECT_TRUE(contains(b, " 8192  ")) << b;
    EXPECT_FALSE(contains(b, "→")) << b;
    EXPECT_TRUE(contains(b, "6.0s   6.0s ± 1.4s  2")) << b;
    EXPECT_TRUE(contains(b, "3 errors in 2/3, 1 warning")) << b;
    EXPECT_TRUE(contains(b, "1 errors, 1 ok, 1 workload-failed")) << b;

    const std::string& c = lines[3];
    EXPECT_EQ(c.rfind("C)", 0), 0u) << c;
    EXPECT_TRUE(contains(c, "virtiofs")) << c;
    EXPECT_TRUE(contains(c, "default")) << c;
    EXPECT_TRUE(contains(c, "no samples")) << c;

    const std::string& d_line = lines[4];
    // One sample: a median, no spread to show, and n says so.
    EXPECT_TRUE(contains(d_line, "1m 15s             -  1 ")) << d_line;
    EXPECT_FALSE(contains(d_line, "→")) << d_line;

    // Every row's columns line up under the header, arrows included.
    size_t cache_column = column_of(lines[0], "cache");
    EXPECT_EQ(column_of(a, "loose"), cache_column);
    EXPECT_EQ(column_of(b, "none"), cache_column);
    EXPECT_EQ(column_of(c, "default"), cache_column);
}

TEST(Results, CacheMismatchShown) {
    std::vector<core::Cell> cells{cell("eeeeeeeeeeee", "k", {{"fs", "9p"}, {"cache", "mmap"}})};
    auto s = sample("eeeeeeeeeeee", core::Outcome::ok, 3);
    s.cache_negotiated = "loose";
    EXPECT_TRUE(contains(render_results(cells, {s}), "mmap→loose"));
}

// A sample that failed without an error line, and one rig could not run: the notes under
// `rig run`'s table say why, by case.
TEST(Results, NotesSayWhyASampleFailedWithoutAnErrorLine) {
    std::vector<core::Cell> cells{cell("aaaaaaaaaaaa", "k", {{"fs", "9p"}}),
                                  cell("bbbbbbbbbbbb", "k", {{"fs", "virtiofs"}})};
    auto failed = sample("aaaaaaaaaaaa", core::Outcome::workload_failed, 2);
    failed.evidence = "workload output (tail):\n./prog: cannot open data.txt\n";
    auto infra = sample("bbbbbbbbbbbb", core::Outcome::infra_error, 0);
    infra.evidence = "virtiofsd exited with status 1\n";
    const std::string text = render_results(cells, {failed, failed, infra});
    EXPECT_TRUE(
        contains(text, "\nA) workload-failed (last output: ./prog: cannot open data.txt)\n"))
        << text;
    EXPECT_TRUE(contains(text, "\nB) infra-error (virtiofsd exited with status 1)\n")) << text;
    EXPECT_EQ(text.find("cannot open data.txt"), text.rfind("cannot open data.txt")) << text;
}

TEST(Results, CaseLabelsPastZ) {
    std::vector<core::Cell> cells;
    for (int i = 0; i < 54; ++i)
        cells.push_back(cell("id" + std::to_string(i), "k", {{"fs", "9p"}}));
    auto lines = lines_of(render_results(cells, {}));
    ASSERT_EQ(lines.size(), 55u);
    auto label = [&](size_t row) { return lines[row + 1].substr(0, lines[row + 1].find(' ')); };
    EXPECT_EQ(label(0), "A)");
    EXPECT_EQ(label(25), "Z)");
    EXPECT_EQ(label(26), "AA)");
    EXPECT_EQ(label(27), "AB)");
    EXPECT_EQ(label(51), "AZ)");
    EXPECT_EQ(label(52), "BA)");
}

namespace {

// Two kernels x two caches, five samples each; the new kernel takes 3 s more with loose.
report::ReportData comparison_data() {
    report::ReportData data;
    data.runs.push_back({1, "quick", "2026-01-01T00:00:00Z", rig::core::RunStatus::finished});
    const std::vector<double> noise{0.2, -0.1, 0.3, -0.3, 0.0};
    int index = 0;
    for (std::string kernel : {"old", "new"})
        for (std::string cache : {"loose", "none"}) {
            auto& result = data.cells.emplace_back();
            result.run_id = 1;
            result.cell = cell("id" + std::to_string(index++), kernel,
                               {{"fs", "9p"}, {"msize", "512000"}, {"cache", cache}});
            double base = kernel == "new" && cache == "loose" ? 13 : 10;
            for (double n : noise) {
                core::Sample facts;
                facts.outcome = core::Outcome::ok;
                facts.guest_seconds = facts.wall_seconds = base + n;
                facts.host_cpu_percent = 50;
                facts.msize_negotiated = 512000;
                facts.cache_negotiated = cache;
                report::tally_sample(result, facts);
            }
            report::finish(result);
        }
    return data;
}

} // namespace

TEST(Render, MarkGainAsMmtestsDoes) {
    EXPECT_EQ(mark_gain(5.123, false), "(   5.12%)");
    EXPECT_EQ(mark_gain(-30.0, true), "* -30.00%*");
    EXPECT_EQ(mark_gain(-0.001, false), "(   0.00%)");
    EXPECT_EQ(mark_gain(-100.0, false).size(), mark_gain(1.0, false).size());
}

TEST(Render, BaselineTwinsAndSignificance) {
    auto data = comparison_data();
    auto comparisons = compare(data, {"kernel", "old"}, core::Test::welch, 0.05, "");
    ASSERT_TRUE(comparisons) << comparisons.error().message;
    ASSERT_EQ(comparisons->size(), 4u);
    EXPECT_EQ((*comparisons)[0].role, Role::baseline);
    EXPECT_EQ((*comparisons)[1].role, Role::baseline);
    const auto& loose = (*comparisons)[2];
    EXPECT_EQ(loose.role, Role::compared);
    EXPECT_EQ(loose.twin, 0u) << "new+loose pairs with old+loose";
    EXPECT_NEAR(loose.change_percent, 3.0 / 10.02 * 100, 1e-9);
    EXPECT_NEAR(loose.gain_percent, -3.0 / 10.02 * 100, 1e-9) << "slower is a negative gain";
    EXPECT_TRUE(loose.significant);
    const auto& none = (*comparisons)[3];
    EXPECT_EQ(none.twin, 1u);
    EXPECT_NEAR(none.gain_percent, 0.0, 1e-9);
    EXPECT_FALSE(none.significant);
    ASSERT_TRUE(none.test);
    EXPECT_DOUBLE_EQ(none.test->p, 1.0);

    EXPECT_FALSE(compare(data, {"kernel", "missing"}, core::Test::welch, 0.05, ""));
    EXPECT_FALSE(compare(data, {"colour", "red"}, core::Test::welch, 0.05, ""));
    EXPECT_FALSE(parse_baseline("kernel"));
    EXPECT_EQ(parse_baseline("kernel=a=b")->value, "a=b");
}

TEST(Render, TextWithBaselineMarksAndLegend) {
    RenderOptions options;
    options.baseline = Baseline{"kernel", "old"};
    auto text = render(comparison_data(), options);
    ASSERT_TRUE(text) << text.error().message;
    auto lines = lines_of(*text);
    ASSERT_GE(lines.size(), 7u) << *text;
    EXPECT_TRUE(contains(lines[0], "vs kernel=old")) << lines[0];
    EXPECT_TRUE(contains(lines[1], "base")) << lines[1];
    EXPECT_TRUE(contains(lines[3], "* -29.94%*")) << lines[3];
    EXPECT_TRUE(contains(lines[3], "<0.001  A)")) << lines[3];
    EXPECT_TRUE(contains(lines[4], "(   0.00%)   1.000  B)")) << lines[4];
    EXPECT_TRUE(contains(*text, "positive is faster")) << *text;
    EXPECT_TRUE(contains(*text, "Welch's t-test, p < 0.05")) << *text;
}

TEST(Render, PivotRowsAndColumns) {
    RenderOptions options;
    options.rows = {"cache", "msize"};
    options.cols = {"kernel"};
    options.baseline = Baseline{"kernel", "old"};
    auto text = render(comparison_data(), options);
    ASSERT_TRUE(text) << text.error().message;
    auto lines = lines_of(*text);
    ASSERT_GE(lines.size(), 3u);
    EXPECT_TRUE(contains(lines[0], "cache  msize")) << lines[0];
    EXPECT_TRUE(contains(lines[0], "old")) << lines[0];
    EXPECT_TRUE(contains(lines[0], "new")) << lines[0];
    EXPECT_TRUE(contains(lines[1], "loose  512000")) << lines[1];
    EXPECT_TRUE(contains(lines[1], "10.0s n=5")) << lines[1];
    EXPECT_TRUE(contains(lines[1], "13.0s n=5 * -29.94%*")) << lines[1];
    EXPECT_TRUE(contains(lines[2], "10.0s n=5 (   0.00%)")) << lines[2];

    options.cols = {"cache"};
    options.rows = {};
    auto ambiguous = render(comparison_data(), options);
    ASSERT_FALSE(ambiguous);
    EXPECT_TRUE(contains(ambiguous.error().message, "differ in kernel"))
        << ambiguous.error().message;
}

TEST(Render, CsvQuotesAndKeepsFullPrecision) {
    auto data = comparison_data();
    data.cells[0].cell.kernel_name = "old, \"patched\"";
    RenderOptions options;
    options.format = Format::csv;
    auto csv = render(data, options);
    ASSERT_TRUE(csv);
    auto lines = lines_of(*csv);
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[0].rfind("case,run,cell,kernel,", 0), 0u);
    EXPECT_TRUE(contains(lines[1], ",\"old, \"\"patched\"\"\",")) << lines[1];
    EXPECT_TRUE(contains(lines[1], ",10.02,")) << "mean of 10.2 9.9 10.3 9.7 10.0: " << lines[1];
}

TEST(Render, JsonCarriesNumbersAndComparisons) {
    RenderOptions options;
    options.format = Format::json;
    options.baseline = Baseline{"kernel", "old"};
    options.test = core::Test::mann_whitney;
    auto json = render(comparison_data(), options);
    ASSERT_TRUE(json);
    EXPECT_TRUE(contains(*json, "\"test\": \"Mann-Whitney U\"")) << *json;
    EXPECT_TRUE(contains(*json, "\"comparison\": \"base\"")) << *json;
    // 5 against 5, all apart: the exact two-sided p is 2/252.
    EXPECT_TRUE(contains(*json, "\"p\": 0.007936507936507936")) << *json;
}

TEST(Render, HtmlEscapesEverything) {
    auto data = comparison_data();
    data.cells[0].cell.kernel_name = "<script>alert(1)</script>";
    data.signatures.push_back({core::Severity::error,
                               "a < b & \"c\"",
                               1,
                               1,
                               {{0, 1, 1, 0, "workload", "a < b", "> a < b\n"}}});
    RenderOptions options;
    options.format = Format::html;
    auto html = render(data, options);
    ASSERT_TRUE(html);
    EXPECT_FALSE(contains(*html, "<script>"));
    EXPECT_TRUE(contains(*html, "&lt;script&gt;"));
    EXPECT_TRUE(contains(*html, "a &lt; b &amp; &quot;c&quot;"));
    EXPECT_FALSE(contains(*html, "http://") && contains(*html, "src=")) << "self-contained";
}

// A guest's console line may hold any byte. nlohmann throws on one that is not UTF-8,
// which ended `rig report --errors --format json`.
TEST(Render, JsonTakesLinesThatAreNotUtf8) {
    auto data = comparison_data();
    data.signatures.push_back({core::Severity::error,
                               "BUG: \xff\xfe",
                               1,
                               1,
                               {{0, 1, 1, 0, "console", "BUG: \xff\xfe", "> BUG: \xff\xfe\n"}}});
    RenderOptions options;
    options.format = Format::json;
    options.view = View::errors;
    auto json = render(data, options);
    ASSERT_TRUE(json);
    EXPECT_TRUE(contains(*json, "\"signature\": \"BUG: \xef\xbf\xbd\xef\xbf\xbd\"")) << *json;
}

// A file name is bytes too: `rig plan --format json` on "caf\xe9.yaml" ended in a throw.
TEST(Plan, JsonTakesAFileNameThatIsNotUtf8) {
    core::Scenario scenario;
    scenario.name = "quick";
    scenario.file = "caf\xe9.yaml";
    std::string json = render_plan(scenario, {}, PlanFormat::json);
    EXPECT_TRUE(contains(json, "\"file\": \"caf\xef\xbf\xbd.yaml\"")) << json;
}

TEST(Render, ErrorsView) {
    auto data = comparison_data();
    RenderOptions options;
    options.view = View::errors;
    EXPECT_EQ(*render(data, options), "no error or warning lines in the selected cells\n");
    data.signatures.push_back(
        {core::Severity::error,
         "x: Bad file descriptor",
         3,
         2,
         {{2, 3, 2, 1, "workload", "x: Bad file descriptor", "  cc\n> x: Bad file descriptor\n"}}});
    auto text = render(data, options);
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, "error  3 lines in 2 samples, 1 cell: x: Bad file descriptor\n"
                     "  C) new debian cache=loose fs=9p msize=512000: 3 lines in 2/5; first in "
                     "sample #1 (workload)\n"
                     "        cc\n"
                     "      > x: Bad file descriptor\n");
}

// The coherency table under the results table: per cell that ran the probe, its promise,
// each kind of change's median stale time and whether the promise held.
TEST(Report, CoherencyTableShowsEachModesPromiseAndStaleTimes) {
    std::vector<core::Cell> cells{cell("c1", "deb-6.1", {{"fs", "9p"}, {"cache", "loose"}}),
                                  cell("c2", "deb-6.1", {{"fs", "9p"}, {"cache", "none"}}),
                                  cell("c3", "deb-6.1", {{"fs", "fuse"}, {"attr_timeout", "1"}}),
                                  cell("c4", "deb-6.1", {{"fs", "9p"}, {"cache", "mmap"}})};
    auto probed = [](const std::string& id, double rewrite, double unseen, double broken,
                     core::Outcome outcome) {
        core::Sample s = sample(id, outcome, 1);
        s.metrics = {{"stale.rewrite.seconds", rewrite, "s"},
                     {"stale.rewrite.unseen", unseen, "files"},
                     {"stale.delete.seconds", 0.001, "s"},
                     {"stale.delete.unseen", 0, "files"},
                     {"stale.broken", broken, "files"}};
        return s;
    };
    std::vector<core::Sample> samples{
        probed("c1", 2.0, 1, 0, core::Outcome::ok),
        probed("c2", 0.0004, 0, 0, core::Outcome::ok),
        probed("c3", 0.97, 0, 0, core::Outcome::ok),
        probed("c3", 0.99, 0, 0, core::Outcome::ok),
        probed("c3", 1.98, 0, 1, core::Outcome::wrong_output),
        sample("c4", core::Outcome::ok, 1), // no probe: no row
    };
    const std::string text = render_results(cells, samples);
    auto table = lines_of(text.substr(text.find("Coherency:")));
    ASSERT_EQ(table.size(), 5u) << text;
    EXPECT_TRUE(contains(table[1], "promise") && contains(table[1], "rewrite") &&
                contains(table[1], "kept"))
        << table[1];
    EXPECT_TRUE(contains(table[2], "loose") && contains(table[2], "none") &&
                contains(table[2], "> 2.00 s") && contains(table[2], "-      ") &&
                table[2].back() == '-')
        << table[2];
    EXPECT_TRUE(contains(table[3], "immediate") && contains(table[3], "0.00 s") &&
                contains(table[3], "kept"))
        << table[3];
    EXPECT_TRUE(contains(table[4], "attr_timeout=1") && contains(table[4], "within 1 s") &&
                contains(table[4], "0.99 s") && contains(table[4], "broken in 1 of 3"))
        << table[4];
    EXPECT_FALSE(contains(render_results({cells[3]}, {samples.back()}), "Coherency:"));
    // The HTML page has the same table, by case.
    RenderOptions options;
    options.format = Format::html;
    auto html = render(from_samples(cells, samples), options);
    ASSERT_TRUE(html) << html.error().message;
    EXPECT_TRUE(contains(*html, "<h2>Coherency</h2>"));
    std::string part = html->substr(html->find("<table id=\"coherency\">"));
    part = part.substr(0, part.find("</table>"));
    EXPECT_TRUE(contains(part, "<tr data-case=\"C\"><td>C)</td>")) << part;
    EXPECT_TRUE(contains(part, "broken in 1 of 3"));
    EXPECT_FALSE(contains(part, "data-case=\"D\"")) << "no probe, no row";
}
