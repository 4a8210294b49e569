// SPDX-License-Identifier: MIT
// Cells stored whole: the record's codec, and freezing a scenario's cells and thawing them
// with a real git repository, fragment and patch that are then changed or deleted.
#include "core/cell_record.hpp"
#include "core/matrix.hpp"
#include "git_run.hpp"
#include "run/cells.hpp"
#include "spec/spec.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"

#include <fstream>
#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;
using namespace rig;

// A repository with two commits on master, a fragment and a patch beside the scenario.
struct Folder {
    test::TempDir dir;
    fs::path scenario = dir.path() / "s" / "scenario.yaml";
    std::string first;
    std::string second;

    Folder() {
        fs::path repo = dir.path() / "linux";
        fs::create_directories(repo);
        fs::create_directories(scenario.parent_path());
        test::git(repo, {"init", "-q", "-b", "master"});
        std::ofstream(repo / "Makefile") << "all:\n";
        test::git(repo, {"add", "Makefile"});
        test::git(repo, {"commit", "-q", "-m", "one"});
        first = test::git(repo, {"rev-parse", "HEAD"});
        std::ofstream(scenario.parent_path() / "mine.config") << "CONFIG_NETFS_STATS=y\n";
        std::ofstream(scenario.parent_path() / "fix.patch") << "From: t\nSubject: fix\n\n";
        std::ofstream(scenario) << "name: s\n"
                                   "kernels:\n"
                                   "  - {name: git, git: ../linux, ref: master, "
                                   "config: [base], patches: [fix.patch]}\n"
                                   "  - {name: deb, debian: linux-image-6.1}\n"
                                   "matrix:\n  config: [mine]\n  cache: [loose, none]\n"
                                   "workload: {command: make}\n"
                                   "timeouts: {boot: 90s}\n";
    }
};

TEST(CellRecord, EveryFieldRoundTrips) {
    core::CellRecord record;
    record.cell.id = "0123456789ab";
    record.cell.key = "ba9876543210";
    record.cell.kernel = 1;
    record.cell.kernel_name = "git";
    record.cell.params = {{"cache", "loose"}, {"fs", "9p"}};
    record.cell.config = "mine";
    record.cell.fragments = {"base", "mine"};
    record.cell.canonical = "kernel{...}";
    record.kernel.name = "git";
    record.kernel.source = core::KernelSource::git;
    record.kernel.repo = "/src/linux";
    record.kernel.ref = "master";
    record.kernel.options = {{"CONFIG_X", "y"}};
    record.commit = std::string(40, 'a');
    record.fragments = {{"mine", "sha", "CONFIG_NETFS_STATS=y\n"}};
    record.patches = {{"fix.patch", "sha2", "From: t\n"}};
    record.series = {{"0001-a.patch", "sha3", "From: s\n"}};
    record.series_cover = {"0000-cover-letter.patch", "sha4", "From: c\n"};
    record.workload.kind = core::WorkloadKind::module;
    record.workload.module_params = {{"n", "1"}};
    record.workload.phases = {{"cold", "make"}};
    record.guest.accel = core::Accel::tcg;
    record.guest.scratch_bytes = 1 << 20;
    record.timeouts.silence = std::chrono::milliseconds(1500);
    auto back = core::decode_cell_record(core::encode(record), "test");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(core::encode(*back), core::encode(record));
    EXPECT_EQ(back->cell.fragments, record.cell.fragments);
    EXPECT_EQ(back->kernel.source, core::KernelSource::git);
    EXPECT_EQ(back->workload.kind, core::WorkloadKind::module);
    EXPECT_EQ(back->guest.accel, core::Accel::tcg);
    EXPECT_EQ(back->timeouts.silence, std::chrono::milliseconds(1500));
    EXPECT_EQ(back->patches.front().text, "From: t\n");
    // What a workload does is in its canonical text: a field the codec forgot would show.
    record.workload.kind = core::WorkloadKind::command;
    record.workload.outputs = {"out/*"};
    record.workload.coherency.changes = {core::Change::remove, core::Change::rewrite};
    record.workload.coherency.window = std::chrono::milliseconds(700);
    record.workload.phases = {{"build", "make"}, {"noop", "make"}};
    record.workload.check_after = {"build"};
    back = core::decode_cell_record(core::encode(record), "test");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->workload.canonical(), record.workload.canonical());
    EXPECT_EQ(back->workload.coherency.changes, record.workload.coherency.changes);

    auto broken = core::decode_cell_record("{\"cell\": 3}", "run 4, cell x");
    ASSERT_FALSE(broken);
    EXPECT_EQ(broken.error().kind, ErrorKind::infra);
    EXPECT_NE(broken.error().message.find("run 4, cell x"), std::string::npos);
}

TEST(CellRecord, TheKeyLeavesTheRevisionOut) {
    Folder folder;
    auto scenario = spec::load_scenario(folder.scenario);
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto cells = core::expand(*scenario).value();
    core::Scenario moved = *scenario;
    moved.kernels[0].ref = folder.first;
    auto other = core::expand(moved).value();
    ASSERT_EQ(cells.size(), other.size());
    EXPECT_NE(cells[0].id, other[0].id);
    EXPECT_EQ(cells[0].key, other[0].key);
    EXPECT_NE(cells[0].key, cells[1].key);
}

TEST(FrozenCells, ThawedCellsRunWhatWasFrozenWhateverHappensToTheFiles) {
    Folder folder;
    auto scenario = spec::load_scenario(folder.scenario);
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto cells = core::expand(*scenario).value();
    auto records = run::freeze(*scenario, cells);
    ASSERT_TRUE(records) << records.error().message;
    ASSERT_EQ(records->size(), cells.size());
    const core::CellRecord& git = records->front();
    EXPECT_EQ(git.commit, folder.first);
    EXPECT_EQ(git.kernel.repo, (folder.dir.path() / "linux").string());
    ASSERT_EQ(git.fragments.size(), 2u);
    EXPECT_EQ(git.fragments[1].name, "mine");
    EXPECT_EQ(git.fragments[1].text, "CONFIG_NETFS_STATS=y\n");
    ASSERT_EQ(git.patches.size(), 1u);
    EXPECT_EQ(git.patches[0].text, "From: t\nSubject: fix\n\n");
    EXPECT_EQ(git.timeouts.boot, std::chrono::seconds(90));

    // master moves on, and the scenario's folder goes.
    fs::path repo = folder.dir.path() / "linux";
    std::ofstream(repo / "Makefile") << "all:\n\ttrue\n";
    test::git(repo, {"commit", "-q", "-am", "two"});
    fs::remove_all(folder.scenario.parent_path());

    std::vector<core::CellRecord> stored;
    for (const auto& record : *records)
        stored.push_back(core::decode_cell_record(core::encode(record), "test").value());
    core::Scenario settings = *scenario;
    settings.kernels.clear();
    fs::path inputs = folder.dir.path() / "inputs";
    auto thawed = run::thaw(settings, stored, inputs);
    ASSERT_TRUE(thawed) << thawed.error().message;
    ASSERT_EQ(thawed->cells.size(), cells.size());
    for (size_t i = 0; i < cells.size(); ++i) {
        EXPECT_EQ(thawed->cells[i].id, cells[i].id);
        EXPECT_EQ(thawed->scenario.kernels[thawed->cells[i].kernel].name,
                  scenario->kernels[cells[i].kernel].name);
    }
    const core::Kernel& kernel = thawed->scenario.kernels[thawed->cells[0].kernel];
    EXPECT_EQ(kernel.ref, folder.first) << "the stored commit, not where master is now";
    EXPECT_EQ(thawed->scenario.dir, inputs.string());
    EXPECT_EQ(util::read_file(inputs / "mine.config"), "CONFIG_NETFS_STATS=y\n");
    ASSERT_EQ(kernel.patches.size(), 1u);
    EXPECT_EQ(util::read_file(kernel.patches[0]), "From: t\nSubject: fix\n\n");
    EXPECT_EQ(thawed->scenario.timeouts.boot, std::chrono::seconds(90));
    EXPECT_EQ(thawed->scenario.workload.command, "make");
}

// A posted series: frozen into the cells that apply it, after the kernel's own patches,
// on the cover letter's base-commit; read once, and never again once thawed.
TEST(FrozenCells, ASeriesIsFrozenIntoItsWithCellsOnItsBase) {
    Folder folder;
    fs::path dir = folder.scenario.parent_path();
    const std::string patch = "From 1 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\n"
                              "Subject: [PATCH 1/1] make: do something\n\nWhy.\n---\n"
                              "diff --git a/Makefile b/Makefile\n--- a/Makefile\n"
                              "+++ b/Makefile\n@@ -1 +1,2 @@\n all:\n+\ttrue\n";
    std::ofstream(dir / "s.mbox") << "From 0 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\n"
                                     "Message-Id: <c@example.org>\n"
                                     "Subject: [PATCH 0/1] something\n\nbase-commit: "
                                  << folder.first << "\n\n"
                                  << patch;
    std::ofstream(folder.scenario) << "name: s\nkernels:\n"
                                      "  - {name: git, git: ../linux, config: [base], "
                                      "patches: [fix.patch], series: s.mbox}\n"
                                      "matrix:\n  cache: [loose]\n";
    auto scenario = spec::load_scenario(folder.scenario);
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto cells = core::expand(*scenario).value();
    ASSERT_EQ(cells.size(), 2u);
    auto records = run::freeze(*scenario, cells);
    ASSERT_TRUE(records) << records.error().message;
    for (const core::CellRecord& record : *records) {
        EXPECT_EQ(record.commit, folder.first);
        bool with = record.cell.param("series") == "with";
        ASSERT_EQ(record.series.size(), with ? 1u : 0u) << record.cell.label();
        EXPECT_EQ(record.series_cover.text.empty(), !with);
    }
    const core::CellRecord& with = (*records)[1];
    EXPECT_EQ(with.series[0].name, "0001-make-do-something.patch");
    EXPECT_EQ(with.series[0].text, patch);
    fs::remove(dir / "s.mbox");

    core::Scenario settings = *scenario;
    settings.kernels.clear();
    auto thawed = run::thaw(settings, *records, folder.dir.path() / "inputs");
    ASSERT_TRUE(thawed) << thawed.error().message;
    ASSERT_EQ(thawed->scenario.kernels.size(), 2u);
    const core::Kernel& applied = thawed->scenario.kernels[thawed->cells[1].kernel];
    ASSERT_EQ(applied.patches.size(), 2u);
    EXPECT_EQ(util::read_file(applied.patches[1]), patch);
    EXPECT_EQ(applied.series, "") << "read once: a step's cell frozen again reads no file";
    auto again = run::freeze(thawed->scenario, thawed->cells);
    EXPECT_TRUE(again) << again.error().message;

    // A ref that names another commit than the series' base is refused, at the key.
    std::ofstream(dir / "s.mbox") << "From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH 0/1] x\n\n"
                                     "base-commit: "
                                  << folder.first << "\n\n"
                                  << patch;
    std::ofstream(folder.scenario)
        << "name: s\nkernels:\n"
           "  - {name: git, git: ../linux, ref: HEAD~0, series: s.mbox}\n";
    std::ofstream(folder.dir.path() / "linux" / "Makefile") << "all:\n\tfalse\n";
    test::git(folder.dir.path() / "linux", {"commit", "-q", "-am", "two"});
    scenario = spec::load_scenario(folder.scenario);
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto refused = run::freeze(*scenario, core::expand(*scenario).value());
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::config);
    EXPECT_NE(refused.error().message.find("kernels[0].series: ref HEAD~0 is "), std::string::npos)
        << refused.error().message;
}

TEST(FrozenCells, WhatCannotBeFrozenIsAConfigErrorNamingIt) {
    Folder folder;
    auto scenario = spec::load_scenario(folder.scenario);
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto cells = core::expand(*scenario).value();
    core::Scenario bad_ref = *scenario;
    bad_ref.kernels[0].ref = "no-such-branch";
    auto frozen = run::freeze(bad_ref, cells);
    ASSERT_FALSE(frozen);
    EXPECT_EQ(frozen.error().kind, ErrorKind::config);
    EXPECT_NE(frozen.error().message.find("no-such-branch"), std::string::npos);

    fs::remove(folder.scenario.parent_path() / "fix.patch");
    frozen = run::freeze(*scenario, cells);
    ASSERT_FALSE(frozen);
    EXPECT_NE(frozen.error().message.find("fix.patch does not exist"), std::string::npos)
        << frozen.error().message;
}

} // namespace
