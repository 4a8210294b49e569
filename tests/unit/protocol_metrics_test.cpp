// SPDX-License-Identifier: MIT
// Tests of run/protocol_metrics: 9p trace windows as whole-workload and per-phase metrics.
#include "run/protocol_metrics.hpp"

#include <gtest/gtest.h>

using namespace rig;

namespace {

vm::ShareCounts counts(uint64_t walks, uint64_t getattrs) {
    vm::ShareCounts share;
    share.requests = walks + getattrs;
    share.by_type = {{"walk", walks}, {"getattr", getattrs}};
    share.read_bytes = 10 * walks;
    return share;
}

std::optional<double> value_of(const std::vector<core::Metric>& metrics, const std::string& name) {
    for (const core::Metric& metric : metrics)
        if (metric.name == name)
            return metric.value;
    return std::nullopt;
}

} // namespace

TEST(ProtocolMetrics, OneWindowWithoutPhases) {
    vm::ProtocolCounts trace;
    trace.shares = {"rootetc", "rootusr", "work"};
    trace.windows = {{{"work", counts(3, 4)}}};
    auto metrics = run::protocol_metrics(trace, {}, run::ninep_count_names());
    EXPECT_EQ(value_of(metrics, "9p.work.requests"), 7);
    EXPECT_EQ(value_of(metrics, "9p.work.walk"), 3);
    EXPECT_EQ(value_of(metrics, "9p.work.read_bytes"), 30);
    // An attached share with no request in the window is counted: zero, not unknown.
    EXPECT_EQ(value_of(metrics, "9p.root.requests"), 0);
    EXPECT_EQ(value_of(metrics, "9p.root.getattr"), 0);
    EXPECT_EQ(value_of(metrics, "9p.work.readdir"), 0) << "common types are always there";
    EXPECT_EQ(value_of(metrics, "9p.work.mkdir"), 0)
        << "every type, so samples carry the same names";
}

TEST(ProtocolMetrics, TheGuestRootsSharesCountAsOne) {
    vm::ProtocolCounts trace;
    trace.shares = {"rootetc", "rootusr", "hostpath0", "work"};
    trace.windows = {
        {{"rootusr", counts(10, 20)}, {"rootetc", counts(1, 2)}, {"hostpath0", counts(0, 1)}}};
    auto metrics = run::protocol_metrics(trace, {}, run::ninep_count_names());
    EXPECT_EQ(value_of(metrics, "9p.root.walk"), 11);
    EXPECT_EQ(value_of(metrics, "9p.root.getattr"), 22);
    EXPECT_EQ(value_of(metrics, "9p.hostpath0.getattr"), 1) << "a host path counts on its own";
    EXPECT_FALSE(value_of(metrics, "9p.rootusr.walk"));
}

TEST(ProtocolMetrics, PhasesAndTheirSum) {
    vm::ProtocolCounts trace;
    trace.shares = {"work"};
    trace.windows = {{{"work", counts(10, 20)}}, {{"work", counts(0, 5)}}};
    auto metrics = run::protocol_metrics(trace, {"build", "noop"}, run::ninep_count_names());
    EXPECT_EQ(value_of(metrics, "build/9p.work.getattr"), 20);
    EXPECT_EQ(value_of(metrics, "noop/9p.work.getattr"), 5);
    EXPECT_EQ(value_of(metrics, "noop/9p.work.walk"), 0);
    EXPECT_EQ(value_of(metrics, "9p.work.getattr"), 25);
    EXPECT_EQ(value_of(metrics, "9p.work.requests"), 35);
}

TEST(ProtocolMetrics, AChecksWindowAfterAPhaseCountsNowhere) {
    vm::ProtocolCounts trace;
    trace.shares = {"work"};
    trace.windows = {
        {{"work", counts(10, 20)}}, {{"work", counts(500, 500)}}, {{"work", counts(0, 5)}}};
    auto names = run::ninep_count_names();
    auto metrics = run::protocol_metrics(trace, {"build", "noop"}, names, {true, false});
    EXPECT_EQ(value_of(metrics, "build/9p.work.getattr"), 20);
    EXPECT_EQ(value_of(metrics, "noop/9p.work.getattr"), 5);
    EXPECT_EQ(value_of(metrics, "9p.work.requests"), 35);
    // Without that window, or with one more, the marks do not match the phases.
    EXPECT_TRUE(run::protocol_metrics(trace, {"build", "noop"}, names).empty());
    trace.windows.erase(trace.windows.begin() + 1);
    EXPECT_TRUE(run::protocol_metrics(trace, {"build", "noop"}, names, {true, false}).empty());
}

TEST(ProtocolMetrics, IncompleteTraceGivesNoCountsAtAll) {
    // A guest killed mid-phase: its counts are unknown, never a partial figure.
    vm::ProtocolCounts trace;
    trace.shares = {"work"};
    trace.windows = {{{"work", counts(1, 1)}}};
    EXPECT_TRUE(run::protocol_metrics(trace, {"build", "noop"}, run::ninep_count_names()).empty());
    trace.windows.clear();
    EXPECT_TRUE(run::protocol_metrics(trace, {}, run::ninep_count_names()).empty());
}
