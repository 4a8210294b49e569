// SPDX-License-Identifier: MIT
// Tests of the "what changed" block: exact counts from two samples a side, rank-tested
// figures under false discovery rate control, one-sided metrics as absent, the groups, and
// the block in text, markdown, JSON and HTML reports with a baseline.
#include "report/changes.hpp"
#include "report/render.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace rig;
using namespace rig::report;

namespace {

core::Cell cell(std::string id, std::string kernel) {
    core::Cell c;
    c.id = std::move(id);
    c.kernel_name = std::move(kernel);
    c.config = "debian";
    c.params = {{"fs", "9p"}, {"cache", "loose"}};
    return c;
}

core::Sample sample(const std::string& cell_id, double seconds, std::vector<core::Metric> metrics) {
    core::Sample s;
    s.cell_id = cell_id;
    s.outcome = core::Outcome::ok;
    s.guest_seconds = seconds;
    s.wall_seconds = seconds + 0.5;
    s.host_cpu_percent = 40;
    s.metrics = std::move(metrics);
    return s;
}

// A fixed pseudo-random sequence in [0, 1): the same figures every run.
struct Noise {
    uint64_t state = 12345;
    double next() {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
    }
};

const MetricChange* find(const ChangeSet& set, const std::string& name) {
    for (const auto& change : set.changes)
        if (change.name == name)
            return &change;
    return nullptr;
}

// Cell "old" then "new", `samples` each, from `make(index, is_new)`.
template <typename Make> ReportData two_cells(int samples, Make make) {
    std::vector<core::Cell> cells{cell("aaaaaaaaaaaa", "old"), cell("bbbbbbbbbbbb", "new")};
    std::vector<core::Sample> all;
    for (int i = 0; i < samples; ++i) {
        all.push_back(make(i, false));
        all.push_back(make(i, true));
    }
    return from_samples(cells, all);
}

TEST(WhatChanged, ACountWithoutSpreadOnEitherSideIsAnExactChange) {
    auto data = two_cells(3, [](int i, bool now) {
        return sample(now ? "bbbbbbbbbbbb" : "aaaaaaaaaaaa", 10 + i * 0.1,
                      {{"9p.work.getattr", now ? 1393.0 : 72.0, "requests"},
                       {"9p.work.walk", 50, "requests"}});
    });
    ChangeSet set = what_changed(data.cells[0], data.cells[1], 0.05);
    const MetricChange* getattr = find(set, "9p.work.getattr");
    ASSERT_NE(getattr, nullptr);
    EXPECT_EQ(getattr->kind, ChangeKind::exact);
    EXPECT_NEAR(getattr->change_percent, (1393.0 - 72) / 72 * 100, 1e-9);
    EXPECT_EQ(getattr->group, "9p requests, share work");
    EXPECT_EQ(change_line(*getattr), "9p.work.getattr: 72 -> 1393 (+1834.7 %), exact, n 3/3");
    // Unchanged, and the duration (same on both sides) is not a change either.
    EXPECT_EQ(find(set, "9p.work.walk"), nullptr);
    EXPECT_EQ(find(set, "duration"), nullptr);
    EXPECT_EQ(set.compared, 4u); // getattr, walk, duration, host.cpu
}

TEST(WhatChanged, OneSampleASideCallsNothing) {
    // 72 -> 1393 once each: a count that was never repeated may vary, and a rank test of
    // one value against one cannot tell.
    auto data = two_cells(1, [](int, bool now) {
        return sample(now ? "bbbbbbbbbbbb" : "aaaaaaaaaaaa", 10,
                      {{"9p.work.getattr", now ? 1393.0 : 72.0, "requests"}});
    });
    ChangeSet set = what_changed(data.cells[0], data.cells[1], 0.05);
    EXPECT_TRUE(set.changes.empty());
}

TEST(WhatChanged, AVaryingFigureIsRankTestedAndRankedBySize) {
    Noise noise;
    auto data = two_cells(8, [&](int, bool now) {
        return sample(now ? "bbbbbbbbbbbb" : "aaaaaaaaaaaa",
                      (now ? 14.0 : 12.0) + noise.next() * 0.5,
                      {{"9p.work.getattr", (now ? 1300.0 : 1000.0) + noise.next() * 20, "requests"},
                       {"guest.cpu.system", 0.3 + noise.next() * 0.01, "s"}});
    });
    ChangeSet set = what_changed(data.cells[0], data.cells[1], 0.05);
    const MetricChange* duration = find(set, "duration");
    const MetricChange* getattr = find(set, "9p.work.getattr");
    ASSERT_NE(duration, nullptr);
    ASSERT_NE(getattr, nullptr);
    EXPECT_EQ(duration->kind, ChangeKind::tested);
    EXPECT_LT(duration->q, 0.05);
    EXPECT_GE(duration->q, duration->p);
    EXPECT_EQ(find(set, "guest.cpu.system"), nullptr) << "the same noise on both sides";
    // The 30 % getattr change's group comes before the 17 % duration's.
    EXPECT_EQ(set.changes.front().name, "9p.work.getattr");
    EXPECT_EQ(duration->group, "durations");
}

TEST(WhatChanged, TwoHundredUnchangedFiguresGiveNoChanceLines) {
    // Every figure from the same distribution on both sides: about 5 % of them reach
    // p < 0.05 by chance, which the false discovery rate control keeps out.
    Noise noise;
    auto data = two_cells(6, [&](int, bool now) {
        std::vector<core::Metric> metrics;
        for (int m = 0; m < 200; ++m)
            metrics.push_back({"guest.vm.m" + std::to_string(m), noise.next() * 100, ""});
        return sample(now ? "bbbbbbbbbbbb" : "aaaaaaaaaaaa", 10 + noise.next(), metrics);
    });
    ChangeSet set = what_changed(data.cells[0], data.cells[1], 0.05);
    EXPECT_EQ(set.tested, 201u); // and host CPU, exactly 40 % on both sides
    size_t by_chance = 0;
    for (const auto& [name, values] : data.cells[1].metrics) {
        auto test = core::mann_whitney_u(data.cells[0].metrics.at(name).values, values.values);
        by_chance += test && test->p < 0.05;
    }
    EXPECT_GT(by_chance, 0u) << "the uncorrected test should have called some";
    EXPECT_TRUE(set.changes.empty()) << change_line(set.changes.front());
}

TEST(WhatChanged, AMetricOnOneSideReadsAbsentNeverZero) {
    auto data = two_cells(2, [](int, bool now) {
        std::vector<core::Metric> metrics{{"9p.work.walk", 50, "requests"}};
        if (now)
            metrics.push_back({"guest.func.netfs_read_folio.calls", 812, "calls"});
        else
            metrics.push_back({"guest.func.v9fs_vfs_readpage.calls", 790, "calls"});
        return sample(now ? "bbbbbbbbbbbb" : "aaaaaaaaaaaa", 10, metrics);
    });
    ChangeSet set = what_changed(data.cells[0], data.cells[1], 0.05);
    ASSERT_EQ(set.changes.size(), 2u);
    const MetricChange* appeared = find(set, "guest.func.netfs_read_folio.calls");
    const MetricChange* vanished = find(set, "guest.func.v9fs_vfs_readpage.calls");
    ASSERT_NE(appeared, nullptr);
    ASSERT_NE(vanished, nullptr);
    EXPECT_EQ(change_line(*appeared), "guest.func.netfs_read_folio.calls: absent -> 812, n 2");
    EXPECT_EQ(change_line(*vanished), "guest.func.v9fs_vfs_readpage.calls: 790 -> absent, n 2");
    EXPECT_EQ(appeared->group, "guest function counts");
}

TEST(WhatChanged, GroupsNameTheShareThePhaseAndTheFamily) {
    EXPECT_EQ(metric_group("9p.root.walk"), "9p requests, share root");
    EXPECT_EQ(metric_group("build/9p.work.walk"), "9p requests, share work, phase build");
    EXPECT_EQ(metric_group("virtiofs.LOOKUP"), "virtiofs requests");
    EXPECT_EQ(metric_group("fuse.getattr"), "FUSE requests");
    EXPECT_EQ(metric_group("fuse.path.getattr:include/%.h"), "FUSE requests by path");
    EXPECT_EQ(metric_group("build/fuse.path.lookup:src/"), "FUSE requests by path, phase build");
    EXPECT_EQ(metric_group("guest.fscache.IO.rd"), "guest counters");
    EXPECT_EQ(metric_group("build/seconds"), "durations");
    EXPECT_EQ(metric_group("duration"), "durations");
    EXPECT_EQ(metric_group("host.cpu"), "host");
    EXPECT_EQ(metric_group("test.answer"), "workload metrics");
}

TEST(WhatChanged, EveryFormWithABaselineCarriesTheBlock) {
    auto data = two_cells(3, [](int i, bool now) {
        return sample(now ? "bbbbbbbbbbbb" : "aaaaaaaaaaaa", 10 + i * 0.1,
                      {{"9p.work.getattr", now ? 1393.0 : 72.0, "requests"}});
    });
    RenderOptions options;
    options.baseline = Baseline{"kernel", "old"};
    auto text = render(data, options);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("what changed: B) new debian cache=loose fs=9p, against A) old debian "
                         "cache=loose fs=9p"),
              std::string::npos)
        << *text;
    EXPECT_NE(text->find("  9p requests, share work:\n    9p.work.getattr: 72 -> 1393"),
              std::string::npos)
        << *text;

    options.format = Format::markdown;
    auto markdown = render(data, options);
    ASSERT_TRUE(markdown);
    EXPECT_NE(markdown->find("\n**9p requests, share work**\n\n- 9p.work.getattr: 72 -> 1393"),
              std::string::npos)
        << *markdown;

    options.format = Format::json;
    auto json = nlohmann::json::parse(*render(data, options));
    const auto& block = json["cells"][1]["comparison"]["what_changed"];
    ASSERT_EQ(block["changes"].size(), 1u) << block.dump();
    EXPECT_EQ(block["changes"][0]["name"], "9p.work.getattr");
    EXPECT_EQ(block["changes"][0]["kind"], "exact");
    EXPECT_FALSE(json["cells"][0]["comparison"].contains("what_changed"));

    options.format = Format::html;
    auto html = render(data, options);
    ASSERT_TRUE(html);
    EXPECT_NE(html->find("<h2>What changed</h2>"), std::string::npos);
    EXPECT_NE(html->find("<li>9p.work.getattr: 72 -&gt; 1393"), std::string::npos);

    // Without a baseline, no block.
    options.format = Format::text;
    options.baseline.reset();
    EXPECT_EQ(render(data, options)->find("what changed"), std::string::npos);
}

} // namespace
