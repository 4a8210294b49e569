// SPDX-License-Identifier: MIT
// Tests of report/invalidation: the FUSE invalidation table from rig-fuse's benchmark metrics.
#include "report/invalidation.hpp"

#include <gtest/gtest.h>

using namespace rig;

namespace {

core::Cell cell(const std::string& id, const std::string& kernel) {
    core::Cell out;
    out.id = id;
    out.kernel_name = kernel;
    out.params = {{"fs", "fuse"}};
    return out;
}

core::Sample sample(const std::string& cell_id, std::vector<core::Metric> metrics) {
    core::Sample out;
    out.cell_id = cell_id;
    out.outcome = core::Outcome::ok;
    out.metrics = std::move(metrics);
    return out;
}

} // namespace

TEST(Invalidation, NothingWithoutMetrics) {
    std::vector<core::Cell> cells{cell("a", "deb-6.1")};
    EXPECT_EQ(report::render_invalidation(cells, {sample("a", {{"compile_s", 3, "s"}})}), "");
    EXPECT_EQ(report::render_invalidation(cells, {}), "");
}

TEST(Invalidation, PerInodeFiguresAndUnsupportedEpoch) {
    std::vector<core::Cell> cells{cell("a", "deb-6.1"), cell("b", "deb-6.12")};
    auto metrics = [](double small, double big, unsigned minor) {
        return std::vector<core::Metric>{
            {"inval_inode_us_20", small, "us"},           {"inval_lookups_20", 20, "count"},
            {"inval_inode_us_8000", big, "us"},           {"inval_epoch_supported", 0, "bool"},
            {"fuse_proto_minor", double(minor), "count"}, {"inval_rounds", 100, "count"}};
    };
    std::string table = report::render_invalidation(cells, {sample("a", metrics(330.4, 4300, 37)),
                                                            sample("b", metrics(120, 9000, 41)),
                                                            sample("b", metrics(140, 11000, 41))});
    EXPECT_NE(table.find("mean of 100 rounds"), std::string::npos) << table;
    EXPECT_NE(table.find("| kernel"), std::string::npos) << table;
    EXPECT_NE(table.find("20 inodes"), std::string::npos) << table;
    EXPECT_NE(table.find("8000 inodes"), std::string::npos) << table;
    EXPECT_NE(table.find("deb-6.1 (FUSE 7.37)"), std::string::npos) << table;
    EXPECT_NE(table.find("330 us"), std::string::npos) << table;
    EXPECT_NE(table.find("4300 us"), std::string::npos) << table;
    // Two samples: the median, with n.
    EXPECT_NE(table.find("130 us (n=2)"), std::string::npos) << table;
    EXPECT_NE(table.find("10000 us (n=2)"), std::string::npos) << table;
    // Epoch row: never a number where the kernel lacks the notify.
    size_t epoch = table.find("NOTIFY_INC_EPOCH");
    ASSERT_NE(epoch, std::string::npos);
    std::string epoch_line = table.substr(epoch, table.find('\n', epoch) - epoch);
    EXPECT_NE(epoch_line.find("unsupported"), std::string::npos) << table;
    EXPECT_EQ(epoch_line.find(" us"), std::string::npos) << table;
}

TEST(Invalidation, EpochFiguresWhereSupported) {
    std::vector<core::Cell> cells{cell("a", "v6.16")};
    std::string table =
        report::render_invalidation(cells, {sample("a", {{"inval_inode_us_20", 300, "us"},
                                                         {"inval_epoch_us_20", 41.6, "us"},
                                                         {"inval_epoch_supported", 1, "bool"}})});
    size_t epoch = table.find("NOTIFY_INC_EPOCH");
    ASSERT_NE(epoch, std::string::npos) << table;
    EXPECT_NE(table.find("42 us", epoch), std::string::npos) << table;
    EXPECT_EQ(table.find("unsupported"), std::string::npos) << table;
}
