// SPDX-License-Identifier: MIT
// A deterministic results database for report tests, written through rig::store: the
// quickstart matrix (2 kernels x msize x cache) with five samples per cell, the errors
// the 9p cache/msize table saw with cache=loose on the newer kernel, and a second, smaller run. A
// second database has the same run with 9p request counters and guest metrics on its samples.
#pragma once

#include "core/matrix.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <tuple>

namespace rig::test {

inline core::Sample fixture_sample(const core::Cell& cell, size_t index, int repetition) {
    // Durations from the cell's axes plus fixed per-repetition noise: deb-6.12 is slower
    // with cache=loose, msize=8192 costs time everywhere, and the cells with
    // msize=512000 and cache=none are alike on both kernels.
    const bool new_kernel = cell.kernel_name == "deb-6.12";
    const bool loose = cell.cache() == "loose";
    const bool small_msize = cell.msize() == 8192u;
    double seconds =
        9.0 + (small_msize ? 2.0 : 0.0) + (loose ? -1.5 : 0.0) + (new_kernel && loose ? 3.0 : 0.0);
    const double noise[] = {0.31, -0.22, 0.05, 0.47, -0.18};
    seconds += noise[repetition] * (1.0 + static_cast<double>(index % 3) * 0.5);

    core::Sample sample;
    sample.cell_id = cell.id;
    sample.repetition = repetition;
    sample.outcome = core::Outcome::ok;
    sample.accel = "tcg";
    sample.kernel_artifact = new_kernel ? "fixture-6.12" : "fixture-6.1";
    sample.guest_seconds = seconds;
    sample.wall_seconds = seconds + 0.4;
    sample.total_seconds = seconds + 9.0;
    sample.host_cpu_percent = (loose ? 35.0 : 80.0) + repetition;
    sample.mount_requested =
        "trans=virtio,version=9p2000.L,msize=" + cell.param("msize") + ",cache=" + cell.cache();
    sample.msize_negotiated = cell.msize();
    sample.cache_negotiated = cell.cache();
    sample.exit_status = 0;
    sample.started_at = "2026-01-01T10:00:00Z";
    if (new_kernel && loose && repetition % 2 == 0) {
        sample.outcome = core::Outcome::errors;
        sample.error_count = 2;
        sample.warning_count = 1;
        std::string bad =
            "cc1: fatal error: unit" + std::to_string(repetition) + ".c: Bad file descriptor";
        sample.lines.push_back({core::Severity::error, "workload", bad,
                                "cc1: fatal error: unitN.c: Bad file descriptor"});
        sample.lines.push_back({core::Severity::error, "workload",
                                "make: *** [Makefile:9: all] "
                                "Error 1",
                                "make: *** [Makefile:N: all] Error N"});
        sample.lines.push_back({core::Severity::warning, "dmesg",
                                "[   12.3456] netfs: Couldn't get user pages (rc=-14)",
                                "netfs: Couldn't get user pages (rc=-N)"});
        sample.evidence = "workload output (tail):\ngcc -O2 -c unit1.c\n" + bad +
                          "\ncompilation terminated.\nmake: *** [Makefile:9: all] Error 1\n";
    }
    return sample;
}

// Counters as the host counts them: exact, the same in every repetition. deb-6.12 with
// cache=loose sends 7 times the getattr requests of deb-6.1 and more walks; a small msize
// takes five times the reads. The first cell's samples were counted by no one: they carry
// guest metrics only. Guest CPU time varies from sample to sample.
inline std::vector<core::Metric> fixture_metrics(const core::Cell& cell, size_t index,
                                                 int repetition) {
    const bool new_kernel = cell.kernel_name == "deb-6.12";
    const bool loose = cell.cache() == "loose";
    const bool small_msize = cell.msize() == 8192u;
    const double noise[] = {0.03, -0.02, 0.01, 0.04, -0.01};
    std::vector<core::Metric> metrics{
        {"guest.cpu.system", (loose ? 0.7 : 1.0) + (new_kernel ? 0.2 : 0) + noise[repetition], "s"},
        {"guest.cpu.user", 6.0 + noise[repetition], "s"}};
    if (index == 0)
        return metrics;
    const double getattr = loose ? (new_kernel ? 1400 : 200) : 800;
    const double walk = new_kernel && loose ? 1500 : 1200;
    const double read = small_msize ? 2000 : 400;
    const double lopen = 300, clunk = 300, other = 20;
    metrics.insert(metrics.end(),
                   {{"9p.work.requests", getattr + walk + read + lopen + clunk + other, "requests"},
                    {"9p.work.getattr", getattr, "requests"},
                    {"9p.work.walk", walk, "requests"},
                    {"9p.work.read", read, "requests"},
                    {"9p.work.lopen", lopen, "requests"},
                    {"9p.work.clunk", clunk, "requests"},
                    {"9p.work.other", other, "requests"},
                    {"9p.work.read_bytes", read * 8192, "bytes"},
                    {"9p.root.requests", 900, "requests"},
                    {"noop/seconds", 0.5, "s"},
                    {"noop/9p.work.requests", 40, "requests"}});
    return metrics;
}

// The Debian packages the fixture's series names resolved to, as `rig run` stores them.
inline void add_fixture_artifacts(store::Database& db) {
    for (const auto& [key, name, package, version] :
         {std::tuple{"fixture-6.1", "deb-6.1", "linux-image-6.1.0-57-amd64", "6.1.192-3"},
          std::tuple{"fixture-6.12", "deb-6.12", "linux-image-6.12.117+deb12-amd64",
                     "6.12.117-1~deb12u1"}}) {
        store::KernelArtifact artifact;
        artifact.cache_key = key;
        artifact.name = name;
        artifact.package = package;
        artifact.package_version = version;
        artifact.created_at = "2026-01-01T09:00:00Z";
        ASSERT_TRUE(db.add_kernel_artifact(artifact));
    }
}

// Writes the counted fixture, one run, to `db_path` (which must not exist).
inline void build_counted_fixture(const std::filesystem::path& db_path) {
    auto scenario = spec::load_scenario(source_root() / "scenarios/quickstart.yaml");
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto cells = core::expand(*scenario);
    ASSERT_TRUE(cells) << cells.error().message;
    auto db = store::Database::open(db_path);
    ASSERT_TRUE(db) << db.error().message;
    add_fixture_artifacts(**db);
    store::RunInfo run;
    run.scenario_name = scenario->name;
    run.scenario_text = scenario->text;
    run.scenario_hash = "counted";
    run.started_at = "2026-01-03T10:00:00Z";
    auto run_id = (*db)->begin_run(run);
    ASSERT_TRUE(run_id);
    ASSERT_TRUE((*db)->add_cells(*run_id, *cells));
    for (int repetition = 0; repetition < 5; ++repetition)
        for (size_t i = 0; i < cells->size(); ++i) {
            auto sample = fixture_sample((*cells)[i], i, repetition);
            sample.metrics = fixture_metrics((*cells)[i], i, repetition);
            ASSERT_TRUE((*db)->add_sample(*run_id, sample));
        }
    ASSERT_TRUE((*db)->finish_run(*run_id, rig::core::RunStatus::finished));
}

// Writes the fixture to `db_path` (which must not exist).
inline void build_report_fixture(const std::filesystem::path& db_path) {
    auto scenario = spec::load_scenario(source_root() / "scenarios/quickstart.yaml");
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto cells = core::expand(*scenario);
    ASSERT_TRUE(cells) << cells.error().message;
    auto db = store::Database::open(db_path);
    ASSERT_TRUE(db) << db.error().message;
    add_fixture_artifacts(**db);

    store::RunInfo run;
    run.scenario_name = scenario->name;
    run.scenario_file = "scenarios/quickstart.yaml";
    run.scenario_text = scenario->text;
    run.scenario_hash = "fixture";
    run.started_at = "2026-01-01T10:00:00Z";
    auto run_id = (*db)->begin_run(run);
    ASSERT_TRUE(run_id);
    ASSERT_TRUE((*db)->add_cells(*run_id, *cells));
    for (int repetition = 0; repetition < 5; ++repetition)
        for (size_t i = 0; i < cells->size(); ++i)
            ASSERT_TRUE((*db)->add_sample(*run_id, fixture_sample((*cells)[i], i, repetition)));
    ASSERT_TRUE((*db)->finish_run(*run_id, rig::core::RunStatus::finished));

    // A second run of two cells with one sample each, newest: the default selection.
    run.started_at = "2026-01-02T09:30:00Z";
    auto second = (*db)->begin_run(run);
    ASSERT_TRUE(second);
    std::vector<core::Cell> two{(*cells)[0], (*cells)[1]};
    ASSERT_TRUE((*db)->add_cells(*second, two));
    for (size_t i = 0; i < two.size(); ++i) {
        auto sample = fixture_sample(two[i], i, 0);
        sample.guest_seconds += 0.1;
        ASSERT_TRUE((*db)->add_sample(*second, sample));
    }
    ASSERT_TRUE((*db)->finish_run(*second, rig::core::RunStatus::interrupted));
}

} // namespace rig::test
