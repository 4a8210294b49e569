// SPDX-License-Identifier: MIT
// Tests of report/metrics and the metrics in every format: the 9p counter columns, n/a
// for a metric a cell lacks, the most differing request types, --metric with a baseline
// (tested, and exact when nothing varies), and the metrics CSV, JSON and HTML carry.
#include "report/metrics.hpp"
#include "report/render.hpp"
#include "report/results.hpp"
#include "text_lines.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace rig;
using namespace rig::report;

namespace {

using Metrics = std::vector<core::Metric>;

core::Cell cell(std::string id, std::string kernel, std::string fs = "9p") {
    core::Cell c;
    c.id = std::move(id);
    c.kernel_name = std::move(kernel);
    c.config = "debian";
    c.params = {{"fs", fs}, {"cache", "loose"}};
    return c;
}

core::Sample sample(const std::string& cell_id, double seconds, Metrics metrics,
                    core::Outcome outcome = core::Outcome::ok) {
    core::Sample s;
    s.cell_id = cell_id;
    s.outcome = outcome;
    s.guest_seconds = seconds;
    s.wall_seconds = seconds + 0.5;
    s.host_cpu_percent = 40;
    s.metrics = std::move(metrics);
    return s;
}

core::Metric requests(double value) {
    return {"9p.work.requests", value, "requests"};
}

using rig::test::lines_of;

std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, ',');)
        fields.push_back(field);
    if (!line.empty() && line.back() == ',')
        fields.emplace_back();
    return fields;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string rendered(const ReportData& data, const RenderOptions& options) {
    auto text = render(data, options);
    EXPECT_TRUE(text) << text.error().message;
    return text ? *text : "";
}

// Two kernels on 9p, the new one with more getattr and walk requests, and a virtiofs cell
// that has no 9p counters at all.
ReportData counted_data() {
    std::vector<core::Cell> cells{cell("aaaaaaaaaaaa", "old"), cell("bbbbbbbbbbbb", "new"),
                                  cell("cccccccccccc", "new", "virtiofs")};
    std::vector<core::Sample> samples;
    for (double noise : {0.0, 1.0, 2.0}) {
        samples.push_back(sample("aaaaaaaaaaaa", 10 + noise / 10,
                                 {requests(1000 + noise),
                                  {"9p.work.getattr", 100 + noise, "requests"},
                                  {"9p.work.walk", 50, "requests"},
                                  {"9p.work.read", 10, "requests"},
                                  {"9p.work.lopen", 0, "requests"},
                                  {"9p.work.clunk", 30, "requests"},
                                  {"9p.work.read_bytes", 1e6, "bytes"},
                                  {"guest.cpu.system", 0.25 + noise / 100, "s"}}));
        samples.push_back(sample("bbbbbbbbbbbb", 12 + noise / 10,
                                 {requests(2000 + noise),
                                  {"9p.work.getattr", 400 + noise, "requests"},
                                  {"9p.work.walk", 100, "requests"},
                                  {"9p.work.read", 10, "requests"},
                                  {"9p.work.lopen", 5, "requests"},
                                  {"9p.work.clunk", 33, "requests"},
                                  {"9p.work.mkdir", 2, "requests"},
                                  {"9p.work.read_bytes", 9e6, "bytes"},
                                  {"guest.cpu.system", 0.5 + noise / 100, "s"}}));
        samples.push_back(
            sample("cccccccccccc", 9 + noise / 10,
                   {{"virtiofs.requests", 700, "requests"}, {"guest.cpu.system", 0.2, "s"}}));
    }
    return from_samples(cells, samples);
}

// A counter that is the same in every repetition: old has 100 requests, new 120, and
// "same" has 100 on both kernels.
ReportData exact_data() {
    std::vector<core::Cell> cells{cell("aaaaaaaaaaaa", "old"), cell("bbbbbbbbbbbb", "new")};
    cells.push_back(cell("cccccccccccc", "old"));
    cells.back().params["cache"] = "none";
    cells.push_back(cell("dddddddddddd", "new"));
    cells.back().params["cache"] = "none";
    std::vector<core::Sample> samples;
    for (double noise : {0.0, 0.3, 0.1, 0.2}) {
        samples.push_back(sample("aaaaaaaaaaaa", 10 + noise, {requests(100)}));
        samples.push_back(sample("bbbbbbbbbbbb", 10 + noise, {requests(120)}));
        samples.push_back(sample("cccccccccccc", 10 + noise, {requests(100)}));
        samples.push_back(sample("dddddddddddd", 10 + noise, {requests(100)}));
    }
    return from_samples(cells, samples);
}

} // namespace

TEST(ReportMetrics, NoCountersNoNewColumnsInAnyFormat) {
    std::vector<core::Cell> cells{cell("aaaaaaaaaaaa", "old")};
    auto data = from_samples(cells, {sample("aaaaaaaaaaaa", 10, {})});
    EXPECT_TRUE(metric_columns(data, {}).empty());
    RenderOptions options;
    EXPECT_FALSE(contains(rendered(data, options), "9p requests"));
    options.format = Format::csv;
    std::string csv = rendered(data, options);
    EXPECT_EQ(lines_of(csv)[0].substr(lines_of(csv)[0].rfind(',') + 1), "outcomes") << csv;
    options.format = Format::json;
    EXPECT_FALSE(contains(rendered(data, options), "\"metrics\""));
    options.format = Format::html;
    EXPECT_FALSE(contains(rendered(data, options), "id=\"metrics\""));
}

TEST(ReportMetrics, RequestsColumnWithNaWhereACellHasNoCount) {
    auto lines = lines_of(render_results(
        {cell("aaaaaaaaaaaa", "old"), cell("cccccccccccc", "new", "virtiofs")},
        {sample("aaaaaaaaaaaa", 10, {requests(1234)}), sample("aaaaaaaaaaaa", 10, {requests(1236)}),
         sample("cccccccccccc", 10, {})}));
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_TRUE(contains(lines[0], "host cpu  9p requests  errors/warnings")) << lines[0];
    EXPECT_TRUE(contains(lines[1], "~40%         1235  none")) << lines[1];
    EXPECT_TRUE(contains(lines[2], "~40%          n/a  none")) << lines[2];
}

TEST(ReportMetrics, OnlyMeasuredSamplesCount) {
    auto data =
        from_samples({cell("aaaaaaaaaaaa", "old")},
                     {sample("aaaaaaaaaaaa", 10, {requests(100)}),
                      sample("aaaaaaaaaaaa", 0, {requests(3)}, core::Outcome::workload_failed),
                      sample("aaaaaaaaaaaa", 11, {requests(102)}, core::Outcome::errors)});
    const MetricValues* values = find_metric(data.cells[0], "9p.work.requests");
    ASSERT_NE(values, nullptr);
    EXPECT_EQ(values->summary.n, 2u);
    EXPECT_DOUBLE_EQ(values->summary.median, 101);
    EXPECT_EQ(find_metric(data.cells[0], "9p.work.walk"), nullptr);
}

TEST(ReportMetrics, MostDifferingTypesArePicked) {
    auto data = counted_data();
    // lopen goes from none to some; getattr x4; walk x2; clunk x1.1; read alike; mkdir in
    // one cell only; the totals and bytes are not request types.
    EXPECT_EQ(most_differing_types(data, 3),
              (std::vector<std::string>{"9p.work.lopen", "9p.work.getattr", "9p.work.walk"}));
    EXPECT_EQ(most_differing_types(data, 10),
              (std::vector<std::string>{"9p.work.lopen", "9p.work.getattr", "9p.work.walk",
                                        "9p.work.clunk"}));
    auto columns = metric_columns(data, {});
    ASSERT_EQ(columns.size(), 4u);
    EXPECT_EQ(columns[0].title, "9p requests");
    EXPECT_EQ(columns[1].title, "9p lopen");
    EXPECT_EQ(columns[2].title, "9p getattr");
    EXPECT_EQ(columns[3].title, "9p walk");

    auto lines = lines_of(rendered(data, {}));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_TRUE(contains(lines[0], "9p requests  9p lopen  9p getattr  9p walk  errors"))
        << lines[0];
    EXPECT_TRUE(contains(lines[1], "1001         0         101       50  none")) << lines[1];
    EXPECT_TRUE(contains(lines[2], "2001         5         401      100  none")) << lines[2];
    EXPECT_TRUE(contains(lines[3], " n/a       n/a         n/a      n/a  none")) << lines[3];
    EXPECT_FALSE(contains(lines[0], "clunk"));
}

TEST(ReportMetrics, EachRenderSaysWhichMetricsItReads) {
    RenderOptions options;
    EXPECT_EQ(metrics_shown(options), MetricsRead::table);
    options.format = Format::markdown;
    EXPECT_EQ(metrics_shown(options), MetricsRead::table);
    for (Format format : {Format::csv, Format::json, Format::html}) {
        options.format = format;
        EXPECT_EQ(metrics_shown(options), MetricsRead::all);
    }
    options.view = View::errors;
    for (Format format : {Format::text, Format::markdown, Format::csv, Format::json}) {
        options.format = format;
        EXPECT_EQ(metrics_shown(options), MetricsRead::none);
    }
    options.format = Format::html;
    EXPECT_EQ(metrics_shown(options), MetricsRead::all) << "HTML shows the table and errors";
    // The counter columns, and the coherency table's figures beside them.
    EXPECT_EQ(table_metric_prefixes({}), (std::vector<std::string>{"9p.work.", "stale."}));
    EXPECT_EQ(table_metric_prefixes({"noop/seconds"}), std::vector<std::string>{"noop/seconds"});
}

TEST(ReportMetrics, MetricText) {
    EXPECT_EQ(metric_text(0), "0");
    EXPECT_EQ(metric_text(-0.0), "0");
    EXPECT_EQ(metric_text(1234), "1234");
    EXPECT_EQ(metric_text(123456789012), "123456789012");
    EXPECT_EQ(metric_text(12345.5), "12345.5");
    EXPECT_EQ(metric_text(0.125), "0.125");
    EXPECT_EQ(metric_text(3.14159), "3.142");
}

TEST(ReportMetrics, UnknownMetricIsAUsageErrorThatNamesTheKnown) {
    auto data = counted_data();
    RenderOptions options;
    options.metrics = {"9p.work.getatr"};
    auto text = render(data, options);
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().kind, ErrorKind::usage);
    EXPECT_EQ(text.error().message,
              "--metric 9p.work.getatr: no selected cell has it; did you mean '9p.work.getattr'?");
    options.metrics = {"guest.cpu.system", "latency"};
    text = render(data, options);
    ASSERT_FALSE(text);
    EXPECT_TRUE(contains(text.error().message, "--metric latency: no selected cell has it; "
                                               "metrics are 9p.work.clunk, 9p.work.getattr, "))
        << text.error().message;
}

TEST(ReportMetrics, ChosenMetricsReplaceTheCounterColumns) {
    RenderOptions options;
    options.metrics = {"guest.cpu.system", "virtiofs.requests"};
    auto lines = lines_of(rendered(counted_data(), options));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_TRUE(contains(lines[0], "host cpu  guest.cpu.system (s)  n  virtiofs.requests  n  "
                                   "errors/warnings"))
        << lines[0];
    EXPECT_FALSE(contains(lines[0], "9p requests")) << lines[0];
    EXPECT_FALSE(contains(lines[0], "getattr")) << lines[0];
    EXPECT_TRUE(contains(lines[1], "0.26  3                n/a  0  none")) << lines[1];
    EXPECT_TRUE(contains(lines[3], "0.2  3                700  3  none")) << lines[3];
}

TEST(ReportMetrics, BaselineComparesTheFirstChosenMetric) {
    auto data = counted_data();
    auto comparisons = compare(data, {"kernel", "old"}, core::Test::welch, 0.05, "9p.work.getattr");
    ASSERT_TRUE(comparisons) << comparisons.error().message;
    EXPECT_EQ((*comparisons)[0].role, Role::baseline);
    const Comparison& getattr = (*comparisons)[1];
    EXPECT_EQ(getattr.role, Role::compared);
    EXPECT_EQ(getattr.decision, Decision::tested);
    EXPECT_NEAR(getattr.change_percent, 300.0 / 101 * 100, 1e-9);
    EXPECT_TRUE(getattr.significant);
    // The virtiofs cell has no twin on the old kernel, and no getattr count.
    EXPECT_EQ((*comparisons)[2].role, Role::no_twin);

    RenderOptions options;
    options.metrics = {"9p.work.getattr"};
    options.baseline = Baseline{"kernel", "old"};
    auto text = rendered(data, options);
    auto lines = lines_of(text);
    EXPECT_TRUE(contains(lines[0], "9p.work.getattr (requests)  n")) << lines[0];
    EXPECT_TRUE(contains(lines[2], "* 297.03%*  <0.001  A)")) << lines[2];
    EXPECT_TRUE(contains(text, "change vs kernel=old: (cell - base) / base of the mean "
                               "9p.work.getattr; positive is more."))
        << text;
    EXPECT_TRUE(contains(text, "*change* is significant")) << text;

    // Without --metric the duration is compared, as before.
    options.metrics = {};
    text = rendered(data, options);
    EXPECT_TRUE(contains(text, "positive is faster")) << text;
}

TEST(ReportMetrics, ZeroSpreadOnBothSidesIsAnExactAnswer) {
    auto data = exact_data();
    for (core::Test test : {core::Test::welch, core::Test::mann_whitney}) {
        auto comparisons = compare(data, {"kernel", "old"}, test, 0.05, "9p.work.requests");
        ASSERT_TRUE(comparisons) << comparisons.error().message;
        const Comparison& different = (*comparisons)[1];
        EXPECT_EQ(different.role, Role::compared);
        EXPECT_EQ(different.decision, Decision::exactly_different);
        EXPECT_TRUE(different.significant);
        EXPECT_FALSE(different.test);
        EXPECT_DOUBLE_EQ(different.change_percent, 20);
        const Comparison& same = (*comparisons)[3];
        EXPECT_EQ(same.decision, Decision::identical);
        EXPECT_FALSE(same.significant);
        EXPECT_EQ(same.change_percent, 0);
    }

    RenderOptions options;
    options.metrics = {"9p.work.requests"};
    options.baseline = Baseline{"kernel", "old"};
    auto text = rendered(data, options);
    auto lines = lines_of(text);
    ASSERT_GE(lines.size(), 8u) << text;
    EXPECT_TRUE(contains(lines[2], "*  20.00%*      exact  A)")) << lines[2];
    EXPECT_TRUE(contains(lines[4], "(   0.00%)  identical  C)")) << lines[4];
    EXPECT_TRUE(contains(text, "exact: no spread on either side")) << text;

    options.format = Format::csv;
    auto csv = rendered(data, options);
    EXPECT_TRUE(contains(csv, ",exactly different (spread 0),,,,yes,9p.work.requests,")) << csv;
    EXPECT_TRUE(contains(csv, ",identical (spread 0),,,,no,9p.work.requests,")) << csv;

    options.format = Format::json;
    auto json = nlohmann::json::parse(rendered(data, options));
    EXPECT_EQ(json["compared_metric"], "9p.work.requests");
    const auto& comparison = json["cells"][1]["comparison"];
    EXPECT_EQ(comparison["test"], "exactly different (spread 0)");
    EXPECT_TRUE(comparison["p"].is_null());
    EXPECT_EQ(comparison["significant"], true);
    EXPECT_EQ(comparison["change_percent"], 20.0);

    for (Format format : {Format::text, Format::csv, Format::json, Format::html}) {
        options.format = format;
        auto out = rendered(data, options);
        EXPECT_FALSE(contains(out, "nan") || contains(out, "NaN")) << out;
    }
}

TEST(ReportMetrics, ZeroBaseIsAnInfiniteChangeNotNaN) {
    std::vector<core::Cell> cells{cell("aaaaaaaaaaaa", "old"), cell("bbbbbbbbbbbb", "new")};
    std::vector<core::Sample> samples;
    for (int i = 0; i < 2; ++i) {
        samples.push_back(sample("aaaaaaaaaaaa", 10, {{"9p.work.lock", 0, "requests"}}));
        samples.push_back(sample("bbbbbbbbbbbb", 10, {{"9p.work.lock", 3, "requests"}}));
    }
    auto comparisons = compare(from_samples(cells, samples), {"kernel", "old"}, core::Test::welch,
                               0.05, "9p.work.lock");
    ASSERT_TRUE(comparisons);
    EXPECT_TRUE(std::isinf((*comparisons)[1].change_percent));
    EXPECT_GT((*comparisons)[1].change_percent, 0);
    EXPECT_EQ((*comparisons)[1].decision, Decision::exactly_different);
}

TEST(ReportMetrics, PivotShowsTheChosenMetric) {
    RenderOptions options;
    options.metrics = {"9p.work.requests"};
    options.baseline = Baseline{"kernel", "old"};
    options.rows = {"cache"};
    options.cols = {"kernel"};
    auto data = exact_data();
    auto text = rendered(data, options);
    auto lines = lines_of(text);
    ASSERT_GE(lines.size(), 4u) << text;
    EXPECT_TRUE(contains(lines[1], "100 n=4  120 n=4 *  20.00%*")) << lines[1];
    EXPECT_TRUE(contains(lines[2], "100 n=4  100 n=4 (   0.00%)")) << lines[2];
    EXPECT_TRUE(contains(text, "9p.work.requests median and n; columns kernel")) << text;
}

TEST(ReportMetrics, CsvCarriesEveryMetricSortedByName) {
    RenderOptions options;
    options.format = Format::csv;
    auto lines = lines_of(rendered(counted_data(), options));
    ASSERT_EQ(lines.size(), 4u);
    auto header = csv_fields(lines[0]);
    auto at = std::find(header.begin(), header.end(), "outcomes");
    ASSERT_NE(at, header.end());
    std::vector<std::string> metric_header(at + 1, header.end());
    const std::vector<std::string> names{
        "9p.work.clunk",    "9p.work.getattr",    "9p.work.lopen",    "9p.work.mkdir",
        "9p.work.read",     "9p.work.read_bytes", "9p.work.requests", "9p.work.walk",
        "guest.cpu.system", "virtiofs.requests"};
    ASSERT_EQ(metric_header.size(), names.size() * 5);
    for (size_t i = 0; i < names.size(); ++i) {
        EXPECT_EQ(metric_header[i * 5], names[i] + "_unit");
        EXPECT_EQ(metric_header[i * 5 + 1], names[i] + "_median");
        EXPECT_EQ(metric_header[i * 5 + 4], names[i] + "_n");
    }
    auto column = [&](const std::string& name) {
        return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    auto old_kernel = csv_fields(lines[1]);
    auto virtiofs = csv_fields(lines[3]);
    ASSERT_EQ(old_kernel.size(), header.size());
    ASSERT_EQ(virtiofs.size(), header.size());
    EXPECT_EQ(old_kernel[column("9p.work.getattr_unit")], "requests");
    EXPECT_EQ(old_kernel[column("9p.work.getattr_median")], "101");
    EXPECT_EQ(old_kernel[column("9p.work.getattr_mean")], "101");
    EXPECT_EQ(old_kernel[column("9p.work.getattr_sd")], "1");
    EXPECT_EQ(old_kernel[column("9p.work.getattr_n")], "3");
    EXPECT_EQ(old_kernel[column("guest.cpu.system_median")], "0.26");
    EXPECT_EQ(old_kernel[column("9p.work.mkdir_median")], "") << "unknown, not 0";
    EXPECT_EQ(old_kernel[column("9p.work.mkdir_n")], "0");
    EXPECT_EQ(virtiofs[column("9p.work.requests_median")], "");
    EXPECT_EQ(virtiofs[column("virtiofs.requests_median")], "700");
    EXPECT_EQ(virtiofs[column("virtiofs.requests_sd")], "0");
}

TEST(ReportMetrics, JsonCarriesEveryMetricOfEveryCell) {
    RenderOptions options;
    options.format = Format::json;
    auto json = nlohmann::json::parse(rendered(counted_data(), options));
    ASSERT_EQ(json["cells"].size(), 3u);
    const auto& old_metrics = json["cells"][0]["metrics"];
    ASSERT_EQ(old_metrics.size(), 8u);
    std::vector<std::string> names;
    for (const auto& [name, metric] : old_metrics.items())
        names.push_back(name);
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    const auto& getattr = old_metrics["9p.work.getattr"];
    EXPECT_EQ(getattr["unit"], "requests");
    EXPECT_EQ(getattr["n"], 3);
    EXPECT_EQ(getattr["median"], 101.0);
    EXPECT_EQ(getattr["mean"], 101.0);
    EXPECT_EQ(getattr["stddev"], 1.0);
    EXPECT_FALSE(old_metrics.contains("9p.work.mkdir")) << "absent, never 0";
    EXPECT_EQ(json["cells"][1]["metrics"]["9p.work.mkdir"]["median"], 2.0);
    EXPECT_EQ(json["cells"][2]["metrics"]["virtiofs.requests"]["median"], 700.0);
    EXPECT_FALSE(json.contains("compared_metric"));
}

TEST(ReportMetrics, HtmlHasATableOfEveryMetric) {
    auto data = counted_data();
    data.cells[0].metrics["<b>odd</b>"] =
        MetricValues{"s", core::Distribution({1.0}), core::summarize({1.0})};
    RenderOptions options;
    options.format = Format::html;
    auto html = rendered(data, options);
    auto start = html.find("<details id=\"metrics\">");
    ASSERT_NE(start, std::string::npos) << html;
    auto end = html.find("</details>", start);
    ASSERT_NE(end, std::string::npos);
    std::string table = html.substr(start, end - start);
    EXPECT_TRUE(contains(table, "11 metrics per case")) << table;
    EXPECT_TRUE(contains(table, "<th class=\"num\">A</th><th class=\"num\">B</th>"
                                "<th class=\"num\">C</th>"))
        << table;
    EXPECT_TRUE(contains(table, "<tr><td>9p.work.getattr</td><td>requests</td><td class=\"num\" "
                                "title=\"mean 101, sd 1, n=3\">101</td>"))
        << table;
    EXPECT_TRUE(contains(table, "<tr><td>9p.work.mkdir</td><td>requests</td><td "
                                "class=\"num\">n/a</td>"))
        << table;
    EXPECT_TRUE(contains(table, "&lt;b&gt;odd&lt;/b&gt;"));
    EXPECT_FALSE(contains(table, "<b>odd</b>"));
    // The results table above it has the counter columns too.
    EXPECT_TRUE(contains(html, "<th class=\"num\">9p requests</th>"));
}
