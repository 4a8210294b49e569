// SPDX-License-Identifier: MIT
// `rig report` on a database written through rig::store (golden files for every format,
// filters, comparisons, errors), on one whose samples carry 9p counters (counter columns,
// --metric with a baseline), its HTML rendered by headless Chromium, and a report over a
// database that a real `rig run` on QEMU produced.
#include "chromium.hpp"
#include "golden.hpp"
#include "report_fixture.hpp"
#include "rig_binary.hpp"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

using rig::test::count_of;
using rig::test::run_rig;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
    const char* build = std::getenv("RIG_BUILD_ROOT");
    fs::path dir = fs::path(build ? build : "/tmp") / "test-report" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// Built once per test program: every golden test reads the same database.
const fs::path& fixture_db() {
    static const fs::path db = [] {
        fs::path path = scratch("fixture") / "rig.db";
        rig::test::build_report_fixture(path);
        return path;
    }();
    return db;
}

const fs::path& counted_db() {
    static const fs::path db = [] {
        fs::path path = scratch("counted") / "rig.db";
        rig::test::build_counted_fixture(path);
        return path;
    }();
    return db;
}

std::string report_of(const fs::path& db, std::vector<std::string> args, int expected_exit) {
    args.insert(args.begin(), {"--db", db.string(), "report"});
    auto result = run_rig(args);
    EXPECT_EQ(result.exit_code, expected_exit) << result.out << result.err;
    return expected_exit == 0 ? result.out : result.err;
}

std::string report(std::vector<std::string> args, int expected_exit = 0) {
    return report_of(fixture_db(), std::move(args), expected_exit);
}

std::string counted_report(std::vector<std::string> args, int expected_exit = 0) {
    return report_of(counted_db(), std::move(args), expected_exit);
}

// The line of the text table that starts with the case label.
std::string row_of(const std::string& text, const std::string& label) {
    auto at = text.find("\n" + label + " ");
    if (at == std::string::npos)
        return "";
    auto end = text.find('\n', at + 1);
    return text.substr(at + 1, end - at - 1);
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(ReportGolden, Text) {
    rig::test::expect_golden(report({"--run", "1"}), "report-quickstart.txt");
}

TEST(ReportGolden, Markdown) {
    rig::test::expect_golden(report({"--run", "1", "--format", "markdown"}),
                             "report-quickstart.md");
}

TEST(ReportGolden, Csv) {
    rig::test::expect_golden(
        report({"--run", "1", "--format", "csv", "--baseline", "kernel=deb-6.1"}),
        "report-baseline.csv");
}

TEST(ReportGolden, Json) {
    rig::test::expect_golden(
        report({"--run", "1", "--format", "json", "--baseline", "kernel=deb-6.1"}),
        "report-baseline.json");
}

TEST(ReportGolden, BaselineText) {
    rig::test::expect_golden(report({"--run", "1", "--baseline", "kernel=deb-6.1"}),
                             "report-baseline.txt");
}

TEST(ReportGolden, PivotWithBaseline) {
    rig::test::expect_golden(report({"--run", "1", "--rows", "cache,msize", "--cols", "kernel",
                                     "--baseline", "kernel=deb-6.1", "--test", "mann-whitney"}),
                             "report-pivot.txt");
}

TEST(ReportGolden, Errors) {
    rig::test::expect_golden(report({"--run", "1", "--errors"}), "report-errors.txt");
    rig::test::expect_golden(report({"--run", "1", "--errors", "--format", "markdown"}),
                             "report-errors.md");
}

TEST(ReportGolden, Html) {
    fs::path out = scratch("golden-html") / "report.html";
    report({"--run", "1", "--baseline", "kernel=deb-6.1", "--format", "html", "-o", out.string()});
    rig::test::expect_golden(rig::test::read_text(out), "report-quickstart.html");
}

// A user's template gets the same data: its table is the text report's, its cells the
// JSON report's, and the built-in page rendered through --template is the HTML report.
TEST(Report, UserTemplateRendersTheReportsData) {
    fs::path dir = scratch("template");
    fs::path mail = dir / "mail.mustache";
    std::ofstream(mail) << "{{{runs_heading}}}\n{{{table}}}{{#has_notes}}\n{{/has_notes}}"
                           "{{#notes}}{{{.}}}\n{{/notes}}"
                           "{{#cells}}{{case}} {{kernel}} {{samples}} {{duration_s.n}}\n{{/cells}}"
                           "{{title}} & {{baseline}} by {{test}}\n";
    auto out = report({"--run", "1", "--baseline", "kernel=deb-6.1", "--template", mail.string()});
    auto text = report({"--run", "1", "--baseline", "kernel=deb-6.1"});
    // The text report: the runs heading, a blank line, the table and its notes (then its
    // "what changed" blocks, which the template does not ask for).
    auto cells_at = out.find("\nA deb-6.1 ");
    ASSERT_NE(cells_at, std::string::npos) << out;
    auto blocks_at = text.find("\nwhat changed: ");
    ASSERT_NE(blocks_at, std::string::npos) << text;
    EXPECT_EQ(out.substr(0, cells_at + 1), text.substr(0, blocks_at));
    EXPECT_TRUE(contains(out, "rig report: quickstart & kernel=deb-6.1 by Welch&#39;s t-test"))
        << out;

    fs::path page = dir / "page.mustache";
    std::ifstream builtin(std::string(std::getenv("RIG_SOURCE_ROOT")) +
                          "/reports/page.html.mustache");
    std::ofstream(page) << builtin.rdbuf();
    fs::path html = dir / "page.html";
    report({"--run", "1", "--baseline", "kernel=deb-6.1", "--format", "html", "-o", html.string()});
    EXPECT_EQ(report({"--run", "1", "--baseline", "kernel=deb-6.1", "--template", page.string()}),
              rig::test::read_text(html));

    std::ofstream(dir / "broken.mustache") << "{{#cells}}unclosed";
    auto error = report({"--run", "1", "--template", (dir / "broken.mustache").string()}, 2);
    EXPECT_TRUE(contains(error, "broken.mustache")) << error;
    error = report({"--run", "1", "--template", (dir / "missing.mustache").string()}, 2);
    EXPECT_TRUE(contains(error, "no template file")) << error;
}

TEST(Report, BaselineMarksOnlyTheRealDifferences) {
    auto json = nlohmann::json::parse(
        report({"--run", "1", "--format", "json", "--baseline", "kernel=deb-6.1"}));
    ASSERT_EQ(json["cells"].size(), 8u);
    for (const auto& cell : json["cells"]) {
        if (cell["kernel"] == "deb-6.1") {
            EXPECT_EQ(cell["comparison"], "base");
            continue;
        }
        // The fixture slows deb-6.12 down by 3 s with cache=loose only.
        const bool loose = cell["params"]["cache"] == "loose";
        EXPECT_EQ(cell["comparison"]["significant"], loose) << cell.dump();
        EXPECT_EQ(cell["comparison"]["gain_percent"].get<double>() < -20, loose) << cell.dump();
        EXPECT_EQ(cell["duration_s"]["n"], 5);
    }
}

TEST(Report, DefaultsToTheNewestRunAndFilters) {
    auto newest = report({});
    EXPECT_TRUE(contains(newest, "run 2 (interrupted")) << newest;
    EXPECT_TRUE(contains(newest, "B)")) << newest;
    EXPECT_FALSE(contains(newest, "C)")) << newest;

    auto both = report({"--run", "1", "--run", "2", "--format", "csv"});
    EXPECT_EQ(count_of(both, "\n"), 1u + 8u + 2u) << both;

    auto loose_612 =
        report({"--run", "1", "--kernel", "deb-6.12", "--where", "cache=loose", "--format", "csv"});
    EXPECT_EQ(count_of(loose_612, "\n"), 3u) << loose_612;
    EXPECT_EQ(count_of(loose_612, ",deb-6.12,"), 2u) << loose_612;

    auto either = report({"--run", "1", "--where", "msize=8192", "--where", "msize=512000",
                          "--where", "cache=none", "--format", "csv"});
    EXPECT_EQ(count_of(either, "\n"), 5u) << either;

    std::string id =
        nlohmann::json::parse(report({"--run", "1", "--format", "json"}))["cells"][3]["cell"];
    auto one = report({"--run", "1", "--cell", id.substr(0, 6), "--format", "csv"});
    EXPECT_EQ(count_of(one, "\n"), 2u) << one;
    EXPECT_TRUE(contains(one, id)) << one;
}

TEST(Report, BadInputIsAClearUsageError) {
    EXPECT_TRUE(contains(report({"--where", "colour=red"}, 2), "unknown key 'colour'"));
    EXPECT_TRUE(contains(report({"--run", "99"}, 2), "no run 99"));
    EXPECT_TRUE(contains(report({"--kernel", "deb-9.9"}, 2), "no cell"));
    EXPECT_TRUE(contains(report({"--run", "1", "--baseline", "kernel=deb-9.9"}, 2),
                         "no selected cell has kernel deb-9.9"));
    EXPECT_TRUE(contains(report({"--run", "1", "--baseline", "kernel"}, 2), "KEY=VALUE"));
    EXPECT_TRUE(contains(report({"--run", "1", "--cols", "kernel"}, 2), "differ in"));
    EXPECT_TRUE(contains(report({"--run", "1", "--rows", "nope"}, 2), "unknown key 'nope'"));

    fs::path missing = scratch("missing") / "none.db";
    auto result = run_rig({"--db", missing.string(), "report"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_TRUE(contains(result.err, "no results database")) << result.err;
    EXPECT_FALSE(fs::exists(missing)) << "a report must not create a database";
}

TEST(ReportCounters, TableGains9pRequestsAndTheMostDifferingTypes) {
    auto text = counted_report({});
    EXPECT_TRUE(
        contains(text, "host cpu  9p requests  9p getattr  9p read  9p walk  errors/warnings"))
        << text;
    EXPECT_TRUE(
        std::regex_search(row_of(text, "A)"), std::regex(R"(~82%\s+n/a\s+n/a\s+n/a\s+n/a  none)")))
        << row_of(text, "A)") << "\nuncounted samples are unknown, not 0";
    EXPECT_TRUE(std::regex_search(row_of(text, "F)"),
                                  std::regex(R"(~37%\s+5520\s+1400\s+2000\s+1500  6 errors)")))
        << text;
    EXPECT_TRUE(std::regex_search(row_of(text, "C)"),
                                  std::regex(R"(~82%\s+3020\s+800\s+400\s+1200  none)")))
        << text;
    EXPECT_FALSE(contains(text, "clunk")) << "alike in every cell";
}

TEST(ReportCounters, MetricWithBaselineEndToEnd) {
    auto text = counted_report({"--metric", "9p.work.getattr", "--baseline", "kernel=deb-6.1"});
    EXPECT_TRUE(contains(text, "9p.work.getattr (requests)  n  errors/warnings")) << text;
    EXPECT_FALSE(contains(text, "host cpu  9p requests")) << text;
    // Counts do not vary between repetitions: the answer is exact, without a test.
    EXPECT_TRUE(std::regex_search(row_of(text, "F)"),
                                  std::regex(R"(1400\s+5\s+.*\* 600\.00%\*\s+exact\s+B\)$)")))
        << text;
    EXPECT_TRUE(std::regex_search(row_of(text, "G)"),
                                  std::regex(R"(800\s+5\s+.*\(   0\.00%\)\s+identical\s+C\)$)")))
        << text;
    EXPECT_TRUE(std::regex_search(row_of(text, "E)"), std::regex(R"(800\s+5\s+.*\s-$)")))
        << row_of(text, "E)") << "\nits twin A) has no count";
    EXPECT_TRUE(std::regex_search(row_of(text, "A)"), std::regex(R"(n/a\s+0\s+none)")))
        << row_of(text, "A)");
    EXPECT_TRUE(contains(text, "change vs kernel=deb-6.1: (cell - base) / base of the mean "
                               "9p.work.getattr; positive is more."))
        << text;
    EXPECT_TRUE(contains(text, "exact: no spread on either side")) << text;
    EXPECT_FALSE(contains(text, "nan")) << text;

    // Guest CPU time varies: Mann-Whitney tests it, 5 against 5 all apart (p = 2/252).
    text = counted_report(
        {"--metric", "guest.cpu.system", "--baseline", "kernel=deb-6.1", "--test", "mann-whitney"});
    EXPECT_TRUE(std::regex_search(row_of(text, "G)"),
                                  std::regex(R"(1\.21\s+5\s+.*\*  19\.80%\*\s+0\.008\s+C\)$)")))
        << text;
    EXPECT_TRUE(contains(text, "of the median guest.cpu.system")) << text;

    auto pivot = counted_report({"--metric", "9p.work.getattr", "--baseline", "kernel=deb-6.1",
                                 "--rows", "msize,cache", "--cols", "kernel"});
    EXPECT_TRUE(contains(pivot, "200 n=5  1400 n=5 * 600.00%*")) << pivot;
    EXPECT_TRUE(contains(pivot, "9p.work.getattr median and n")) << pivot;
}

TEST(ReportCounters, MetricsRepeatedOrCommaSeparated) {
    auto text = counted_report({"--metric", "9p.work.getattr,9p.work.walk", "--metric",
                                "noop/seconds", "--metric", "9p.work.walk"});
    EXPECT_TRUE(contains(text, "9p.work.getattr (requests)  n  9p.work.walk (requests)  n  "
                               "noop/seconds  n  errors/warnings"))
        << text;
    auto error = counted_report({"--metric", "9p.work.getatr"}, 2);
    EXPECT_TRUE(contains(error, "--metric 9p.work.getatr: no selected cell has it; did you mean "
                                "'9p.work.getattr'?"))
        << error;
    error = report({"--run", "1", "--metric", "9p.work.requests"}, 2);
    EXPECT_TRUE(contains(error, "no sample of the selected cells has metrics")) << error;
}

TEST(ReportCounters, CsvJsonAndHtmlCarryEveryMetric) {
    auto csv = counted_report(
        {"--format", "csv", "--metric", "9p.work.getattr", "--baseline", "kernel=deb-6.1"});
    auto header = csv.substr(0, csv.find('\n'));
    for (const char* column :
         {",compared_metric,", ",9p.root.requests_unit,9p.root.requests_median,",
          ",guest.cpu.user_n,", ",noop/9p.work.requests_median,", ",noop/seconds_sd,"})
        EXPECT_TRUE(contains(header, column)) << column << " not in " << header;
    EXPECT_TRUE(contains(csv, ",exactly different (spread 0),,,,yes,9p.work.getattr,")) << csv;

    auto json = nlohmann::json::parse(counted_report({"--format", "json"}));
    ASSERT_EQ(json["cells"].size(), 8u);
    EXPECT_FALSE(json["cells"][0]["metrics"].contains("9p.work.requests"));
    EXPECT_EQ(json["cells"][0]["metrics"]["guest.cpu.user"]["n"], 5);
    const auto& b = json["cells"][1]["metrics"];
    EXPECT_EQ(b.size(), 13u);
    EXPECT_EQ(b["9p.work.requests"]["median"], 4020.0);
    EXPECT_EQ(b["9p.work.requests"]["stddev"], 0.0);
    EXPECT_EQ(b["noop/9p.work.requests"]["unit"], "requests");
    EXPECT_EQ(b["9p.work.read_bytes"]["median"], 2000.0 * 8192);

    fs::path page = scratch("counted-html") / "report.html";
    counted_report({"--format", "html", "-o", page.string()});
    auto html = rig::test::read_text(page);
    EXPECT_TRUE(contains(html, "<details id=\"metrics\"><summary>13 metrics per case")) << html;
    EXPECT_TRUE(contains(html, "<th class=\"num\">9p requests</th>"));
}

// Chromium parses the page, lays it out and serializes the DOM it built: the table rows
// and SVG elements must be there, and a screenshot of the page must not be blank.
TEST(ReportHtml, RendersInHeadlessChromium) {
    fs::path dir = scratch("chromium");
    fs::path page = dir / "report.html";
    report({"--run", "1", "--baseline", "kernel=deb-6.1", "--format", "html", "-o", page.string()});
    auto rendered = rig::test::render_in_chromium(page, dir, 1400, 1600);
    const std::string& html = rendered.dom;
    for (const char* label : {"A", "B", "C", "D", "E", "F", "G", "H"})
        EXPECT_TRUE(contains(html, std::string("<tr data-case=\"") + label + "\">")) << label;
    EXPECT_EQ(count_of(html, "<svg "), 3u);
    for (const char* chart : {"chart-duration", "chart-cpu", "chart-errors"})
        EXPECT_TRUE(contains(html, std::string("id=\"") + chart + "\"")) << chart;
    // One median dot per cell, and whiskers; significance marks survive escaping.
    EXPECT_EQ(count_of(html, "<circle class=\"median\""), 8u);
    EXPECT_EQ(count_of(html, "<line class=\"whisker\""), 8u);
    EXPECT_TRUE(std::regex_search(html, std::regex(R"(<td class="num">\*\s+-\d+\.\d\d%\*</td>)")))
        << "a significant gain marked *...%*";
    EXPECT_TRUE(contains(html, "Bad file descriptor"));
    EXPECT_TRUE(contains(html, "class=\"signature-group error\""));

    EXPECT_EQ(rendered.width, 1400u);
    EXPECT_EQ(rendered.height, 1600u);
    // A blank white page compresses to a few KiB; charts, tables and text do not.
    EXPECT_GT(rendered.png.size(), 40u * 1024) << "the screenshot looks blank";
}

// The only test here that boots guests: one real `rig run`, then every view of it.
TEST(ReportOfRealRun, ReadsLikeSeed004) {
    fs::path dir = scratch("real-run");
    fs::path db = dir / "rig.db";
    auto run =
        run_rig({"--db", db.string(), "run", "tests/data/run/ok.yaml"}, std::chrono::minutes(15));
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

    auto text = run_rig({"--db", db.string(), "report"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_TRUE(contains(text.out, "run-ok, run 1 (finished")) << text.out;
    // Counter columns (9p requests, request types) sit between host CPU and errors when
    // the samples carry counters.
    EXPECT_TRUE(std::regex_search(
        text.out, std::regex(R"(A\)\s+deb-6\.1\s+debian\s+9p\s+4186112→512000\s+loose\s+)"
                             R"(\d+\.\ds\s+-\s+1\s+~\d+%(\s+\d+)*\s+none\s+1 ok)")))
        << text.out;
    EXPECT_TRUE(std::regex_search(
        text.out, std::regex(R"(B\)\s+deb-6\.1\s+debian\s+virtiofs\s+-\s+auto\s+\d+\.\ds)")))
        << text.out;
    // The table `rig run` printed comes from the same renderer.
    auto table_start = text.out.find("case");
    ASSERT_NE(table_start, std::string::npos);
    EXPECT_TRUE(contains(run.out, text.out.substr(table_start))) << run.out;

    auto json = run_rig({"--db", db.string(), "report", "--format", "json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    auto parsed = nlohmann::json::parse(json.out);
    ASSERT_EQ(parsed["cells"].size(), 2u);
    EXPECT_EQ(parsed["cells"][0]["msize"]["negotiated"], 512000);
    EXPECT_GT(parsed["cells"][0]["duration_s"]["median"].get<double>(), 0);
    EXPECT_GT(parsed["cells"][1]["host_cpu_percent"]["median"].get<double>(), 0);

    auto errors = run_rig({"--db", db.string(), "report", "--errors"});
    EXPECT_EQ(errors.exit_code, 0) << errors.err;
    EXPECT_TRUE(contains(errors.out, "no error or warning lines")) << errors.out;

    auto compared = run_rig({"--db", db.string(), "report", "--baseline", "fs=9p"});
    EXPECT_EQ(compared.exit_code, 0) << compared.err;
    EXPECT_TRUE(contains(compared.out, "vs fs=9p")) << compared.out;
}

// guest: {profile: [9p]} on a Debian kernel: the guest counts 9p's client functions with
// kprobe events, cache=loose against cache=none shows them in the "what changed" block in
// text and JSON, and the guest's count of getattr calls is checked against the host's
// trace of the same window.
TEST(ReportOfRealRun, GuestFunctionCountsExplainLooseAgainstNone) {
    fs::path dir = scratch("profile");
    fs::path db = dir / "rig.db";
    auto run = run_rig({"--db", db.string(), "run", "tests/data/run/profile.yaml"},
                       std::chrono::minutes(20));
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

    auto json = run_rig({"--db", db.string(), "report", "--format", "json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    auto cells = nlohmann::json::parse(json.out)["cells"];
    ASSERT_EQ(cells.size(), 2u);
    for (const auto& cell : cells) {
        const auto& metrics = cell["metrics"];
        ASSERT_TRUE(metrics.contains("guest.profile.kprobes")) << cell.dump();
        const double probed = metrics["guest.profile.kprobes"]["median"].get<double>();
        EXPECT_GT(probed, 50) << "v9fs_* and p9_* on 6.1";
        EXPECT_LE(probed, 200) << "capped";
        ASSERT_TRUE(metrics.contains("guest.func.p9_client_getattr_dotl.calls")) << cell.dump();
        ASSERT_TRUE(metrics.contains("guest.func.v9fs_vfs_lookup.calls")) << cell.dump();
        // Each call sends one Tgetattr; the host's trace counts them on every share but
        // the marking one, between the marks that bound the guest's window.
        const double guest_getattrs =
            metrics["guest.func.p9_client_getattr_dotl.calls"]["median"].get<double>();
        double host_getattrs = 0;
        for (const char* share : {"9p.work.getattr", "9p.root.getattr"})
            if (metrics.contains(share))
                host_getattrs += metrics[share]["median"].get<double>();
        EXPECT_GT(guest_getattrs, 0) << cell.dump();
        EXPECT_EQ(guest_getattrs, host_getattrs) << cell.dump();
        std::cout << "cache=" << cell["params"]["cache"] << ": guest getattr calls "
                  << guest_getattrs << ", host getattr requests " << host_getattrs << ", probed "
                  << probed << "\n";
    }

    auto compared = run_rig({"--db", db.string(), "report", "--baseline", "cache=none"});
    ASSERT_EQ(compared.exit_code, 0) << compared.err;
    EXPECT_TRUE(contains(compared.out, "guest function counts:")) << compared.out;
    EXPECT_TRUE(std::regex_search(
        compared.out, std::regex(R"(guest\.func\.\w+\.calls: \d+ -> \d+ \(.*\), exact, n 2/2)")))
        << compared.out;
    auto compared_json =
        run_rig({"--db", db.string(), "report", "--baseline", "cache=none", "--format", "json"});
    ASSERT_EQ(compared_json.exit_code, 0) << compared_json.err;
    bool function_line = false;
    const auto compared_cells = nlohmann::json::parse(compared_json.out)["cells"];
    for (const auto& cell : compared_cells)
        if (cell.contains("comparison") && cell["comparison"].is_object())
            for (const auto& change : cell["comparison"]["what_changed"]["changes"])
                function_line = function_line || change["group"] == "guest function counts";
    EXPECT_TRUE(function_line) << compared_json.out;
    // A profile that probed something leaves no warning.
    auto errors = run_rig({"--db", db.string(), "report", "--errors"});
    EXPECT_FALSE(contains(errors.out, "function profile unavailable")) << errors.out;
}
