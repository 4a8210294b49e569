// SPDX-License-Identifier: MIT
// Tests of run/runner: what a run makes sure of before its first sample.
#include "run/runner.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>
#include <sstream>

using namespace rig;

namespace {

// A backend whose virtiofsd is missing; it must never be asked to start a guest.
class NoVirtiofsd final : public vm::Hypervisor {
public:
    std::string name() const override { return "no-virtiofsd"; }
    Expected<std::unique_ptr<vm::Vm>> start(const vm::GuestSpec&) override {
        ++started;
        return fail(ErrorKind::infra, "a guest was started");
    }
    Expected<std::vector<core::HostCpu>> host_cpus() override {
        return std::vector<core::HostCpu>{{0, 0, 0, 0}};
    }
    Expected<void> find_programs(const std::set<vm::ShareKind>& kinds) const override {
        asked = kinds;
        if (kinds.count(vm::ShareKind::virtiofs))
            return fail(ErrorKind::infra, "virtiofsd not found");
        return {};
    }

    int started = 0;
    mutable std::set<vm::ShareKind> asked;
};

const char* const k_scenario = R"(name: needs-virtiofsd
kernels:
  - {name: deb-6.1, debian: linux-image-6.1.0-57-amd64}
matrix:
  fs: [9p, virtiofs]
  cache: {9p: [loose], virtiofs: [auto]}
workload: {command: "true"}
)";

} // namespace

TEST(Runner, AMissingProgramStopsTheRunBeforeAnythingIsStored) {
    rig::test::TempDir dir;
    auto scenario = spec::parse_scenario(k_scenario, "needs-virtiofsd.yaml");
    ASSERT_TRUE(scenario) << scenario.error().message;
    auto db = store::Database::open(dir.path() / "rig.db");
    ASSERT_TRUE(db) << db.error().message;
    NoVirtiofsd hypervisor;
    run::RunSettings settings;
    settings.results_dir = dir.path();
    settings.cache_dir = dir.path() / "cache";
    std::atomic<bool> interrupted{false};
    std::ostringstream out;
    auto summary = run::run_scenario(*scenario, **db, hypervisor, settings, 0, interrupted, out);
    ASSERT_FALSE(summary);
    EXPECT_EQ(summary.error().kind, ErrorKind::infra);
    EXPECT_EQ(summary.error().message, "virtiofsd not found");
    EXPECT_EQ(hypervisor.asked,
              (std::set<vm::ShareKind>{vm::ShareKind::v9p, vm::ShareKind::virtiofs}));
    EXPECT_EQ(hypervisor.started, 0);
    EXPECT_TRUE((*db)->runs().value().empty()) << "no run row for a run that cannot start";
    EXPECT_FALSE(std::filesystem::exists(settings.cache_dir)) << "no kernel was fetched";

    // A resume is refused the same way, and its run stays as it was: open, without cells.
    store::RunInfo stored;
    stored.scenario_name = scenario->name;
    stored.scenario_text = scenario->text;
    auto run_id = (*db)->begin_run(stored);
    ASSERT_TRUE(run_id);
    auto resumed =
        run::run_scenario(*scenario, **db, hypervisor, settings, *run_id, interrupted, out);
    ASSERT_FALSE(resumed);
    EXPECT_EQ(resumed.error().message, "virtiofsd not found");
    EXPECT_EQ(hypervisor.started, 0);
    EXPECT_TRUE((*db)->cells(*run_id).value().empty());
    EXPECT_EQ((*db)->last_unfinished_run().value()->id, *run_id);
}
