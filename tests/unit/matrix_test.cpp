// SPDX-License-Identifier: MIT
// Tests of core/: matrix expansion, applicability, include/exclude, stable cell ids.
#include "core/axis.hpp"
#include "core/matrix.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>

using namespace rig::core;

namespace {

const Filesystem& fs(std::string_view name) {
    return *find_fs(name);
}

Located at(std::string value, int line = 1, std::string path = "") {
    return Located{std::move(value), Loc{line, 3}, std::move(path)};
}

AxisValues axis(std::string name, std::vector<std::string> values) {
    AxisValues out;
    out.name = std::move(name);
    for (size_t i = 0; i < values.size(); ++i)
        out.values.push_back(at(values[i], static_cast<int>(10 + i),
                                "matrix." + out.name + "[" + std::to_string(i) + "]"));
    return out;
}

Kernel debian(std::string name, std::string package) {
    Kernel kernel;
    kernel.name = std::move(name);
    kernel.source = KernelSource::debian;
    kernel.package = std::move(package);
    return kernel;
}

Kernel git(std::string name, std::string ref) {
    Kernel kernel;
    kernel.name = std::move(name);
    kernel.source = KernelSource::git;
    kernel.repo = "/src/linux";
    kernel.ref = std::move(ref);
    kernel.config = {"base"};
    return kernel;
}

Scenario quick() {
    Scenario scenario;
    scenario.file = "q.yaml";
    scenario.name = "q";
    scenario.kernels = {debian("deb-6.1", "linux-image-6.1.0-57-amd64"),
                        debian("deb-6.12", "linux-image-6.12.113+deb12-amd64-unsigned")};
    scenario.matrix = {axis("fs", {"9p", "virtiofs"}), axis("msize", {"8192", "512000"}),
                       axis("cache", {"none"})};
    return scenario;
}

std::set<std::string> ids(const std::vector<Cell>& cells) {
    std::set<std::string> out;
    for (const auto& cell : cells)
        out.insert(cell.id);
    return out;
}

Rule rule(std::map<std::string, std::vector<std::string>> match) {
    Rule out;
    for (auto& [key, values] : match)
        for (auto& value : values)
            out.match[key].push_back(at(value));
    return out;
}

} // namespace

TEST(Matrix, AxisThatDoesNotApplyDoesNotMultiply) {
    auto cells = expand(quick());
    ASSERT_TRUE(cells) << cells.error().message;
    // Per kernel: 9p x 2 msizes x 1 cache + virtiofs x 1 cache.
    EXPECT_EQ(cells->size(), 6u);
    for (const auto& cell : *cells) {
        if (cell.fs().name == "virtiofs")
            EXPECT_FALSE(cell.msize());
        else
            EXPECT_TRUE(cell.msize());
    }
}

TEST(Matrix, IdsAreStableUnderReordering) {
    Scenario a = quick();
    Scenario b = quick();
    std::reverse(b.kernels.begin(), b.kernels.end());
    std::reverse(b.matrix.begin(), b.matrix.end());
    for (auto& values : b.matrix)
        std::reverse(values.values.begin(), values.values.end());
    auto cells_a = expand(a);
    auto cells_b = expand(b);
    ASSERT_TRUE(cells_a && cells_b);
    EXPECT_EQ(ids(*cells_a), ids(*cells_b));
    EXPECT_EQ(cells_a->front().id.size(), 12u);
}

TEST(Matrix, IdsChangeWithWhatIsMeasured) {
    Scenario a = quick();
    Scenario b = quick();
    b.guest.cpus = 1;
    Scenario c = quick();
    c.workload.generate.units = 41;
    auto ia = ids(*expand(a));
    EXPECT_NE(ia, ids(*expand(b)));
    EXPECT_NE(ia, ids(*expand(c)));
    Scenario d = quick();
    d.repeat = 7; // repetitions are run parameters, not identity
    EXPECT_EQ(ia, ids(*expand(d)));
}

TEST(Matrix, ExcludeRemovesMatchingCells) {
    Scenario scenario = quick();
    scenario.exclude = {rule({{"fs", {"virtiofs"}}}),
                        rule({{"kernel", {"deb-6.12"}}, {"msize", {"8192"}}})};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells);
    EXPECT_EQ(cells->size(), 3u);
    for (const auto& cell : *cells)
        EXPECT_FALSE(cell.kernel_name == "deb-6.12" && cell.param("msize") == "8192");
}

TEST(Matrix, ExcludeOnInapplicableAxisDoesNotMatch) {
    Scenario scenario = quick();
    scenario.exclude = {rule({{"msize", {"8192", "512000"}}})};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells);
    EXPECT_EQ(cells->size(), 2u); // the virtiofs cells have no msize
}

TEST(Matrix, IncludeAddsASubMatrix) {
    Scenario scenario = quick();
    scenario.include = {rule(
        {{"kernel", {"deb-6.1"}}, {"fs", {"9p"}}, {"msize", {"4186112"}}, {"cache", {"loose"}}})};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells);
    ASSERT_EQ(cells->size(), 7u);
    const Cell& extra = cells->back();
    EXPECT_EQ(extra.kernel_name, "deb-6.1");
    EXPECT_EQ(extra.msize(), 4186112u);
    EXPECT_EQ(extra.cache(), "loose");
}

TEST(Matrix, IncludeOfAnExistingCellIsNotDuplicated) {
    Scenario scenario = quick();
    scenario.include = {rule({{"fs", {"9p"}}, {"msize", {"8192"}}})};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells);
    EXPECT_EQ(cells->size(), 6u);
}

TEST(Matrix, CacheInvalidForFsNamesTheValue) {
    Scenario scenario = quick();
    scenario.matrix[2] = axis("cache", {"none", "loose"});
    auto cells = expand(scenario);
    ASSERT_FALSE(cells);
    EXPECT_EQ(cells.error().message,
              "q.yaml:11:3: matrix.cache[1]: cache mode 'loose' is not valid for fs virtiofs "
              "(valid: auto, always, none); exclude the pair or give cache per fs");
    scenario.exclude = {rule({{"fs", {"virtiofs"}}, {"cache", {"loose"}}})};
    EXPECT_TRUE(expand(scenario));
}

TEST(Matrix, CachePerFs) {
    Scenario scenario = quick();
    scenario.matrix[2] = axis("cache", {});
    scenario.matrix[2].by_fs["9p"] = {at("loose"), at("mmap")};
    scenario.matrix[2].by_fs["virtiofs"] = {at("always")};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells) << cells.error().message;
    EXPECT_EQ(cells->size(), 2u * (2 * 2 + 1));
}

TEST(Matrix, PerFsCacheWithoutAnEntryKeepsTheDefault) {
    Scenario scenario = quick();
    scenario.matrix[2] = axis("cache", {});
    scenario.matrix[2].by_fs["9p"] = {at("loose")};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells) << cells.error().message;
    EXPECT_EQ(cells->size(), 2u * (2 + 1));
    for (const auto& cell : *cells)
        EXPECT_EQ(cell.cache(), cell.fs().name == "9p" ? "loose" : "");
}

TEST(Matrix, EmptyAfterExclusions) {
    Scenario scenario = quick();
    scenario.matrix_loc = {4, 3};
    scenario.exclude = {rule({{"cache", {"none"}}})};
    auto cells = expand(scenario);
    ASSERT_FALSE(cells);
    EXPECT_EQ(cells.error().message,
              "q.yaml:4:3: matrix: the matrix is empty after exclusions (all 6 cells excluded)");
}

TEST(Matrix, ConfigAxisAppliesToGitKernelsOnly) {
    Scenario scenario = quick();
    scenario.kernels.push_back(git("v6.1", "v6.1"));
    scenario.matrix.push_back(axis("config", {"debug", "release"}));
    auto cells = expand(scenario);
    ASSERT_TRUE(cells);
    // Debian kernels: 3 cells each; the git kernel: 3 x 2 configs.
    EXPECT_EQ(cells->size(), 3u + 3u + 6u);
    for (const auto& cell : *cells) {
        if (cell.kernel_name == "v6.1") {
            EXPECT_TRUE(cell.config == "debug" || cell.config == "release");
            EXPECT_EQ(cell.fragments, (std::vector<std::string>{"base", cell.config}));
        } else {
            EXPECT_EQ(cell.config, "debian");
            EXPECT_TRUE(cell.fragments.empty());
        }
    }
}

TEST(Matrix, GitConfigLabelFromFragments) {
    Scenario scenario = quick();
    scenario.kernels = {git("v6.1", "v6.1")};
    scenario.kernels[0].config = {"base", "debug"};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells);
    EXPECT_EQ(cells->front().config, "debug");
}

TEST(Matrix, DefaultFsIs9p) {
    Scenario scenario = quick();
    scenario.matrix = {};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells);
    ASSERT_EQ(cells->size(), 2u);
    EXPECT_EQ(cells->front().fs().name, "9p");
    EXPECT_FALSE(cells->front().msize());
}

TEST(Fs, NegotiatedOptionsAcrossKernelVersions) {
    // 6.1 prints the cache mode as a bare word, and nothing for none.
    auto old_loose = negotiated_options(
        fs("9p"), "rw,dirsync,relatime,loose,access=client,msize=512000,trans=virtio");
    EXPECT_EQ(old_loose.msize, 512000u);
    EXPECT_EQ(old_loose.cache, "loose");
    auto old_none = negotiated_options(
        fs("9p"), "rw,sync,dirsync,relatime,access=client,msize=8192,trans=virtio");
    EXPECT_EQ(old_none.cache, "none");
    // 6.4+ prints a hex bit mask.
    EXPECT_EQ(negotiated_options(fs("9p"), "rw,relatime,cache=0xf,access=client,msize=8192").cache,
              "loose");
    EXPECT_EQ(negotiated_options(fs("9p"), "rw,cache=5,msize=8192").cache, "mmap");
    EXPECT_EQ(negotiated_options(fs("9p"), "rw,cache=8f").cache, "fscache");
    EXPECT_FALSE(negotiated_options(fs("virtiofs"), "rw,relatime").msize);
    // A number that does not fit is no msize, not the value it wraps to.
    EXPECT_FALSE(negotiated_options(fs("9p"), "rw,msize=18446744073709551616").msize);
    EXPECT_FALSE(negotiated_options(fs("9p"), "rw,msize=184467440737095516150").msize);
    EXPECT_EQ(negotiated_options(fs("9p"), "rw,msize=18446744073709551615").msize, UINT64_MAX);
    EXPECT_FALSE(negotiated_options(fs("9p"), "rw,msize=,msize=+1,msize=1x").msize);
}

TEST(Matrix, FuseKnobsApplyToFuseCellsOnlyAndCacheNot) {
    Scenario scenario = quick();
    scenario.matrix = {axis("fs", {"9p", "fuse"}), axis("cache", {"none"}),
                       axis("attr_timeout", {"0", "1"}), axis("keep_cache", {"true"})};
    auto cells = expand(scenario);
    ASSERT_TRUE(cells) << cells.error().message;
    ASSERT_EQ(cells->size(), 6u); // per kernel: one 9p cell, two fuse cells
    for (const Cell& cell : *cells) {
        if (cell.fs().name == "fuse") {
            EXPECT_EQ(cell.cache(), "");
            EXPECT_EQ(cell.param("keep_cache"), "true");
            EXPECT_NE(cell.param("attr_timeout"), "");
        } else {
            EXPECT_EQ(cell.cache(), "none");
            EXPECT_EQ(cell.canonical.find("timeout"), std::string::npos) << cell.canonical;
            EXPECT_EQ(cell.canonical.find("keep_cache"), std::string::npos) << cell.canonical;
        }
    }
    // Knob axes in the matrix leave the ids of 9p cells as they were without them.
    Scenario plain = quick();
    plain.matrix = {axis("fs", {"9p"}), axis("cache", {"none"})};
    auto plain_cells = expand(plain);
    ASSERT_TRUE(plain_cells);
    std::set<std::string> nine_p;
    for (const Cell& cell : *cells)
        if (cell.fs().name == "9p")
            nine_p.insert(cell.id);
    EXPECT_EQ(nine_p, ids(*plain_cells));
}

TEST(Matrix, CanonicalSecondsAndBooleans) {
    EXPECT_EQ(canonical_seconds("0"), "0");
    EXPECT_EQ(canonical_seconds("0.000"), "0");
    EXPECT_EQ(canonical_seconds("1.0"), "1");
    EXPECT_EQ(canonical_seconds("0.50"), "0.5");
    EXPECT_EQ(canonical_seconds("007"), "7");
    EXPECT_EQ(canonical_seconds("86400"), "86400");
    EXPECT_EQ(canonical_seconds("0.000000001"), "0.000000001");
    for (const char* bad : {"", ".5", "2.", "1s", "-1", "+1", "1e3", "86400.5", "100000",
                            "0.0000000001", "1.2.3", " 1"})
        EXPECT_FALSE(canonical_seconds(bad)) << bad;
    EXPECT_EQ(canonical_boolean("true"), "true");
    EXPECT_EQ(canonical_boolean("false"), "false");
    for (const char* bad : {"yes", "no", "on", "True", "1", ""})
        EXPECT_FALSE(canonical_boolean(bad)) << bad;
}

TEST(Fs, FuseHasNoCacheModes) {
    ASSERT_TRUE(find_fs("fuse"));
    EXPECT_EQ(find_fs("fuse")->name, "fuse");
    EXPECT_FALSE(find_fs("nfs"));
    EXPECT_TRUE(valid_caches(fs("fuse")).empty());
    EXPECT_FALSE(has_cache_axis(fs("fuse")));
    EXPECT_TRUE(has_cache_axis(fs("9p")));
    EXPECT_TRUE(has_cache_axis(fs("virtiofs")));
}

TEST(Fs, TableListsTheRowsInTheirOrder) {
    EXPECT_EQ(fs_names(), (std::vector<std::string>{"9p", "virtiofs", "fuse"}));
    EXPECT_EQ(valid_caches(fs("9p")), (std::vector<std::string>{"none", "loose", "fscache", "mmap",
                                                                "readahead", "writeback"}));
    EXPECT_EQ(valid_caches(fs("virtiofs")), (std::vector<std::string>{"auto", "always", "none"}));
}
