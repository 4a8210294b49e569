// SPDX-License-Identifier: MIT
// Tests of the filesystem table (core/fs.hpp): a row added in a file of its own
// (fake_fs_row.cpp) is a filesystem to the spec, the matrix and the guest like any other.
#include "core/evidence.hpp"
#include "core/matrix.hpp"
#include "guest/initramfs.hpp"
#include "guest/job.hpp"
#include "report/plan.hpp"
#include "spec/spec.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using namespace rig;

namespace {

const std::string k_head = "name: t\n"
                           "kernels:\n"
                           "  - {name: deb-6.1, debian: linux-image-6.1.0-57-amd64}\n";

} // namespace

TEST(FsTable, AFakeRowIsListedAfterRigsOwn) {
    EXPECT_EQ(core::fs_names(), (std::vector<std::string>{"9p", "virtiofs", "fuse", "fakefs"}));
}

TEST(FsTable, AFakeRowExpandsIntoCellsWithItsCacheModes) {
    auto scenario =
        spec::parse_scenario(k_head + "matrix:\n"
                                      "  fs: [9p, fakefs]\n"
                                      "  msize: [8K]\n"
                                      "  cache: {9p: [loose], fakefs: [strict, lazy]}\n",
                             "t.yaml");
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto cells = core::expand(*scenario);
    ASSERT_TRUE(cells) << cells.error().message;
    std::vector<std::string> labels;
    for (const core::Cell& cell : *cells)
        labels.push_back(cell.label());
    EXPECT_EQ(labels, (std::vector<std::string>{
                          "deb-6.1 debian cache=loose fs=9p msize=8192",
                          "deb-6.1 debian cache=strict fs=fakefs msize=8192",
                          "deb-6.1 debian cache=lazy fs=fakefs msize=8192",
                      }));
    EXPECT_EQ(&cells->back().fs(), core::find_fs("fakefs"));
    // `rig plan` lists its cells like any other's.
    std::string plan = report::render_plan(*scenario, *cells, report::PlanFormat::text);
    EXPECT_NE(plan.find("fakefs"), std::string::npos) << plan;
    EXPECT_NE(plan.find("lazy"), std::string::npos) << plan;
    // What a sample records it asked for: the row's daemon and cache mode.
    EXPECT_EQ(core::mount_requested(cells->back()), "fakefsd cache=lazy");
    core::Cell plain = cells->back();
    plain.params.erase("cache");
    EXPECT_EQ(core::mount_requested(plain), "fakefsd cache=strict");
}

TEST(FsTable, AFakeRowsCacheModesAreChecked) {
    auto scenario =
        spec::parse_scenario(k_head + "matrix:\n  fs: fakefs\n  cache: [loose]\n", "t.yaml");
    ASSERT_FALSE(scenario);
    EXPECT_NE(scenario.error().message.find("(valid: strict, lazy)"), std::string::npos)
        << scenario.error().message;
}

TEST(FsTable, AFakeRowsGuestRecipe) {
    const core::Filesystem& fs = *core::find_fs("fakefs");
    guest::Job job;
    job.fs = &fs;
    job.mark_phases = true;
    auto text = guest::job_file(job);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_NE(text->find("\nMODULES=/etc/rig/modules-fakefs\n"), std::string::npos) << *text;
    EXPECT_NE(text->find("\nWORK_MOUNT=kernel\nWORK_FSTYPE=fakefs\n"), std::string::npos) << *text;
    EXPECT_NE(text->find("\nMARK_WORK=1\n"), std::string::npos) << *text;
    auto modules = guest::guest_modules(fs, core::Machine::q35).required;
    EXPECT_NE(std::find(modules.begin(), modules.end(), "fakefs"), modules.end());
    EXPECT_EQ(core::negotiated_options(fs, "rw,lazy").cache, "lazy");
    EXPECT_EQ(core::negotiated_options(fs, "rw").cache, "strict");
    // Its kernel log lines count as filesystem evidence, as 9p's do.
    EXPECT_EQ(core::classify_kernel_line(4, "fakefs: server not responding"),
              core::Severity::warning);
    EXPECT_FALSE(core::classify_kernel_line(4, "otherfs: server not responding"));
}
