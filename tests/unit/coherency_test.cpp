// SPDX-License-Identifier: MIT
// The coherency probe: the host's changes in a share the guest can write to
// (workload/coherency), what each mount promises (core::coherence), and the verdict on
// what the guest saw (run/coherency).
#include "core/cell.hpp"
#include "core/fs.hpp"
#include "core/scenario.hpp"
#include "run/coherency.hpp"
#include "run/server_side.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"
#include "workload/coherency.hpp"

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using rig::core::Change;
using rig::core::Coherence;
using rig::guest::StaleRecord;

namespace {

rig::core::Workload params_of(std::vector<Change> changes) {
    rig::core::Workload workload;
    workload.coherency.changes = std::move(changes);
    workload.coherency.window = std::chrono::seconds(2);
    return workload;
}

// Phases build, touch and rebuild, checked after build (and, uselessly, after rebuild:
// the end checks there anyway).
rig::core::Workload phased(std::vector<Change> changes) {
    rig::core::Workload workload = params_of(std::move(changes));
    workload.phases = {{"build", "make"}, {"touch", "touch h"}, {"rebuild", "make"}};
    workload.check_after = {"rebuild", "build"};
    return workload;
}

rig::core::Cell cell_of(std::map<std::string, std::string> params) {
    rig::core::Cell cell;
    cell.params = std::move(params);
    return cell;
}

std::optional<double> metric(const rig::run::CoherencyCheck& check, const std::string& name) {
    for (const auto& m : check.metrics)
        if (m.name == name)
            return m.value;
    return std::nullopt;
}

} // namespace

TEST(Coherency, ThePlanNamesOneFileperChangeInOrder) {
    auto params = params_of({Change::rewrite, Change::remove, Change::rewrite});
    EXPECT_EQ(rig::workload::coherency_plan(params), "c-0001:rewrite c-0002:delete c-0003:rewrite");
    EXPECT_EQ(rig::core::parse_change("delete"), Change::remove);
    EXPECT_FALSE(rig::core::parse_change("remove"));
}

TEST(Coherency, EachCheckAfterAPhaseGetsFilesOfItsOwnBeforeTheEndsFiles) {
    auto workload = phased({Change::rewrite, Change::append});
    EXPECT_EQ(rig::core::paused_phases(workload), std::vector<std::string>{"build"});
    EXPECT_EQ(rig::core::checks(workload), (std::vector<std::string>{"build", ""}));
    EXPECT_EQ(rig::core::check_prefix(workload, "build"), "build/");
    EXPECT_EQ(rig::core::check_prefix(workload, ""), "rebuild/");
    EXPECT_EQ(rig::core::check_prefix(params_of({Change::rewrite}), ""), "");
    EXPECT_EQ(rig::workload::coherency_plan(workload),
              "c-0001:rewrite:build c-0002:append:build c-0003:rewrite c-0004:append");
}

TEST(Coherency, TheHostMakesEachChangeInTheShare) {
    rig::test::TempDir share;
    auto params = params_of({Change::rewrite, Change::append, Change::rename, Change::remove});
    ASSERT_TRUE(rig::workload::write_coherency_files(share.path(), params));
    const fs::path dir = share.path() / "coherency";
    EXPECT_EQ(rig::util::read_file(dir / "c-0001"), "rig coherency c-0001 1\n");
    for (const auto& file : rig::workload::coherency_files(params))
        ASSERT_TRUE(rig::workload::apply_change(share.path(), file)) << file.name;
    // A rewrite keeps the length: only the content says it changed.
    EXPECT_EQ(rig::util::read_file(dir / "c-0001"), "rig coherency c-0001 2\n");
    EXPECT_EQ(rig::util::read_file(dir / "c-0002"),
              "rig coherency c-0002 1\nrig coherency c-0002 2\n");
    EXPECT_FALSE(fs::exists(dir / "c-0003"));
    EXPECT_EQ(rig::util::read_file(dir / "c-0003.moved"), "rig coherency c-0003 1\n");
    EXPECT_FALSE(fs::exists(dir / "c-0004"));
}

TEST(Coherency, TheHostFollowsNoLinkTheGuestPutInPlace) {
    rig::test::TempDir share, outside;
    auto params = params_of({Change::rewrite});
    ASSERT_TRUE(rig::workload::write_coherency_files(share.path(), params));
    const fs::path victim = outside.path() / "victim";
    ASSERT_TRUE(rig::util::write_file_atomically(victim, "host file\n", rig::util::Sync::skip));
    const auto file = rig::workload::coherency_files(params).front();

    fs::remove(share.path() / "coherency" / "c-0001");
    fs::create_symlink(victim, share.path() / "coherency" / "c-0001");
    auto changed = rig::workload::apply_change(share.path(), file);
    ASSERT_FALSE(changed);
    EXPECT_NE(changed.error().message.find("c-0001"), std::string::npos);

    fs::remove_all(share.path() / "coherency");
    fs::create_directory_symlink(outside.path(), share.path() / "coherency");
    fs::rename(victim, outside.path() / "c-0001");
    EXPECT_FALSE(rig::workload::apply_change(share.path(), file));
    EXPECT_EQ(rig::util::read_file(outside.path() / "c-0001"), "host file\n");
}

TEST(Coherency, TheServerSideMakesEachPlannedChangeOnceAndAcknowledgesIt) {
    rig::test::TempDir share, acks;
    auto params = params_of({Change::append});
    ASSERT_TRUE(rig::workload::write_coherency_files(share.path(), params));
    rig::run::ServerSide changes(params, share.path(), acks.path());
    changes.change("c-0001");
    changes.change("c-0001"); // asked twice: appended once
    changes.change("c-0002"); // not in the plan
    changes.change("../etc");
    EXPECT_EQ(rig::util::read_file(share.path() / "coherency" / "c-0001"),
              "rig coherency c-0001 1\nrig coherency c-0001 2\n");
    EXPECT_TRUE(fs::exists(acks.path() / "c-0001"));
    EXPECT_FALSE(fs::exists(acks.path() / "c-0002"));
    EXPECT_EQ(changes.note(), "");
}

TEST(Coherency, EachMountPromisesWhatItsRowSays) {
    using Promise = Coherence::Promise;
    auto promise = [](std::map<std::string, std::string> params) {
        return rig::core::coherence(cell_of(std::move(params)));
    };
    EXPECT_EQ(promise({{"fs", "9p"}}).promise, Promise::immediate);
    EXPECT_EQ(promise({{"fs", "9p"}, {"cache", "none"}}).promise, Promise::immediate);
    EXPECT_EQ(promise({{"fs", "9p"}, {"cache", "mmap"}}).promise, Promise::immediate);
    EXPECT_EQ(promise({{"fs", "9p"}, {"cache", "loose"}}).promise, Promise::none);
    EXPECT_EQ(promise({{"fs", "virtiofs"}, {"cache", "none"}}).promise, Promise::immediate);
    EXPECT_EQ(rig::core::describe(promise({{"fs", "virtiofs"}})), "within 1 s");
    EXPECT_EQ(promise({{"fs", "virtiofs"}, {"cache", "always"}}).promise, Promise::none);
    EXPECT_EQ(rig::core::describe(promise({{"fs", "fuse"}})), "within 1 s");
    EXPECT_EQ(rig::core::describe(
                  promise({{"fs", "fuse"}, {"entry_timeout", "0.5"}, {"attr_timeout", "2"}})),
              "within 2 s");
    EXPECT_EQ(rig::core::describe(
                  promise({{"fs", "fuse"}, {"entry_timeout", "0"}, {"attr_timeout", "0"}})),
              "within 0 s");
}

TEST(Coherency, AStaleReadBreaksAnImmediatePromise) {
    auto params = params_of({Change::rewrite, Change::remove});
    std::vector<StaleRecord> seen{{"c-0001", 0, 400'000, true}, {"c-0002", 3, 20'000'000, true}};
    auto check = rig::run::check_coherency(params, seen, {Coherence::Promise::immediate, 0});
    EXPECT_EQ(check.broken, 1);
    ASSERT_EQ(check.lines.size(), 1u);
    EXPECT_EQ(check.lines[0].severity, rig::core::Severity::error);
    EXPECT_EQ(check.lines[0].line, "coherency: c-0002: the server's delete was seen after 0.02 s "
                                   "(3 stale reads); the mount promises immediate");
    EXPECT_EQ(check.lines[0].signature,
              "coherency: a delete stays stale past the promise (immediate)");
    EXPECT_EQ(metric(check, "stale.reads"), 3);
    EXPECT_EQ(metric(check, "stale.files"), 1);
    EXPECT_EQ(metric(check, "stale.broken"), 1);
    EXPECT_DOUBLE_EQ(*metric(check, "stale.delete.seconds"), 0.02);
    EXPECT_DOUBLE_EQ(*metric(check, "stale.rewrite.seconds"), 0.0004);
    EXPECT_EQ(metric(check, "stale.rename.seconds"), std::nullopt);
}

TEST(Coherency, ATimedPromiseAllowsItsTimeoutAndASecondMore) {
    auto params = params_of({Change::append, Change::rename, Change::rewrite, Change::remove});
    std::vector<StaleRecord> seen{{"c-0001", 300, 1'980'000'000, true},
                                  {"c-0002", 900, 2'000'000'000, false},
                                  {"c-0003", 0, 500'000, true},
                                  {"c-0004", 5, 2'100'000'000, true}};
    auto check = rig::run::check_coherency(params, seen, {Coherence::Promise::within, 1.0});
    EXPECT_EQ(check.broken, 2);
    ASSERT_EQ(check.lines.size(), 2u);
    EXPECT_NE(check.lines[0].line.find("c-0002: the server's rename was not seen in 2.00 s"),
              std::string::npos);
    EXPECT_EQ(check.lines[1].line, "coherency: c-0004: the server's delete was seen after 2.10 s "
                                   "(5 stale reads); the mount promises within 1 s");
    EXPECT_EQ(metric(check, "stale.unseen"), 1);
    EXPECT_EQ(metric(check, "stale.rename.unseen"), 1);
    EXPECT_DOUBLE_EQ(*metric(check, "stale.seconds"), 2.1);
}

TEST(Coherency, AMountThatPromisesNothingIsMeasuredNotJudged) {
    auto params = params_of({Change::rewrite});
    std::vector<StaleRecord> seen{{"c-0001", 5000, 2'000'000'000, false}};
    auto check = rig::run::check_coherency(params, seen, {});
    EXPECT_EQ(check.broken, 0);
    EXPECT_TRUE(check.lines.empty());
    EXPECT_EQ(metric(check, "stale.rewrite.unseen"), 1);
    EXPECT_EQ(metric(check, "stale.broken"), 0);
}

TEST(Coherency, AFileTheGuestDidNotProbeIsAWarningNotAVerdict) {
    auto params = params_of({Change::rewrite, Change::append});
    std::vector<StaleRecord> seen{{"c-0001", 0, 1000, true}, {"c-0009", 9, 9, false}};
    auto check = rig::run::check_coherency(params, seen, {Coherence::Promise::immediate, 0});
    EXPECT_EQ(check.broken, 0);
    ASSERT_EQ(check.lines.size(), 1u);
    EXPECT_EQ(check.lines[0].severity, rig::core::Severity::warning);
    EXPECT_EQ(check.lines[0].line, "coherency: c-0002 (append) was not probed");
    EXPECT_EQ(metric(check, "stale.append.seconds"), std::nullopt);
}

TEST(Coherency, TheServerSideHashesTheShareAtACheckAfterAPhaseOnce) {
    rig::test::TempDir share, acks;
    auto workload = phased({});
    workload.outputs = {"*.o"};
    ASSERT_TRUE(
        rig::util::write_file_atomically(share.path() / "a.o", "one\n", rig::util::Sync::skip));
    rig::run::ServerSide server(workload, share.path(), acks.path());
    server.hash("touch"); // no check after touch
    server.hash("build");
    ASSERT_TRUE(
        rig::util::write_file_atomically(share.path() / "b.o", "two\n", rig::util::Sync::skip));
    server.hash("build"); // once: the share as it was when first asked
    ASSERT_NE(server.manifest_at("build"), nullptr);
    EXPECT_EQ(server.manifest_at("build")->files.size(), 1u);
    EXPECT_EQ(server.manifest_at("touch"), nullptr);
    EXPECT_TRUE(fs::exists(acks.path() / "hash-build"));
    EXPECT_FALSE(fs::exists(acks.path() / "hash-touch"));
}

TEST(Coherency, EachCheckHasFiguresOfItsOwnAndTheTotalsCoverAll) {
    auto workload = phased({Change::rewrite});
    std::vector<StaleRecord> seen{{"c-0001", 4, 30'000'000, true}, {"c-0002", 0, 100'000, true}};
    auto check = rig::run::check_coherency(workload, seen, {Coherence::Promise::immediate, 0});
    EXPECT_EQ(check.broken, 1);
    ASSERT_EQ(check.lines.size(), 1u);
    EXPECT_EQ(check.lines[0].line,
              "coherency: c-0001 (after build): the server's rewrite was seen after 0.03 s "
              "(4 stale reads); the mount promises immediate");
    EXPECT_EQ(metric(check, "stale.reads"), 4);
    EXPECT_EQ(metric(check, "build/stale.reads"), 4);
    EXPECT_EQ(metric(check, "build/stale.broken"), 1);
    EXPECT_EQ(metric(check, "rebuild/stale.reads"), 0);
    EXPECT_EQ(metric(check, "rebuild/stale.broken"), 0);
    EXPECT_DOUBLE_EQ(*metric(check, "build/stale.rewrite.seconds"), 0.03);
}
