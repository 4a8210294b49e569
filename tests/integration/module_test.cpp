// SPDX-License-Identifier: MIT
// `module:` workloads and the scratch disk on real guests: a module printing a known
// metric on Debian 6.1 (its headers fetched once) and on the kernels suite's git kernel
// (sharing its [base, release] build folder), a module that does not compile, one that
// calls BUG(), and the scratch disk as the workload sees it.
#include "linux_repo.hpp"
#include "rig_binary.hpp"
#include "scratch.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>

using rig::test::one;
using rig::test::query;
using rig::test::run_rig;
namespace fs = std::filesystem;

namespace {

struct Scratch : rig::test::Scratch {
    explicit Scratch(const std::string& name) : rig::test::Scratch(name, "test-modules") {}
};

std::string data(const std::string& name) {
    return (fs::path(std::getenv("RIG_TEST_DATA")) / "module" / name).string();
}

fs::path cache_dir() {
    return fs::path(std::getenv("RIG_CACHE"));
}

std::string metric(const fs::path& db, const std::string& name) {
    return one(db, "SELECT value || ' ' || unit FROM metrics WHERE name = '" + name + "'");
}

TEST(Module, DebianHeadersAreFetchedOnceAndAModulePrintsItsMetric) {
    // The first run must fetch: the headers and built modules an earlier run left (a
    // cached module needs no headers) are removed first.
    std::error_code ec;
    fs::remove_all(cache_dir() / "headers", ec);
    fs::remove_all(cache_dir() / "modules", ec);
    Scratch scratch("deb-metric");
    auto run = run_rig({"--db", scratch.db.string(), "run", data("deb-metric.yaml")},
                       std::chrono::minutes(30));
    ASSERT_EQ(run.exit_code, 1) << "the module's error line makes the sample 'errors'\n"
                                << run.out << run.err;
    EXPECT_NE(run.out.find("fetching linux-headers-"), std::string::npos) << run.out;
    EXPECT_FALSE(fs::is_empty(cache_dir() / "headers"));
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "errors");
    EXPECT_EQ(metric(scratch.db, "test.answer"), "42.0 units");
    // The module's pr_err is an error line with its signature, from the kernel log.
    EXPECT_NE(one(scratch.db, "SELECT count(*) FROM error_lines WHERE line LIKE "
                              "'%rig_test_metric: an error line for rig to count%'"),
              "0");
    // The sample's scratch disk is gone with the sample.
    for (const auto& entry : fs::recursive_directory_iterator(scratch.dir))
        EXPECT_NE(entry.path().filename(), "scratch.img") << entry.path();

    // Another module for the same kernel: compiled against the headers already there.
    Scratch second("deb-broken");
    auto broken = run_rig({"--db", second.db.string(), "run", data("deb-broken.yaml")},
                          std::chrono::minutes(10));
    EXPECT_EQ(broken.exit_code, 1) << broken.out << broken.err;
    EXPECT_EQ(broken.out.find("fetching linux-headers-"), std::string::npos)
        << "the headers were downloaded again:\n"
        << broken.out;
    EXPECT_EQ(one(second.db, "SELECT outcome FROM samples"), "build-failed");
    std::string evidence = one(second.db, "SELECT evidence FROM samples");
    EXPECT_NE(evidence.find("broken.c:7:"), std::string::npos) << evidence;
    EXPECT_NE(evidence.find("undeclared_value"), std::string::npos) << evidence;
    // No guest was booted for a module that does not compile.
    EXPECT_EQ(one(second.db, "SELECT total_seconds FROM samples"), "0.0");
}

TEST(Module, BugInTheModuleIsAKernelPanicWithoutWaitingForTheTimeout) {
    Scratch scratch("deb-bug");
    auto started = std::chrono::steady_clock::now();
    auto run = run_rig({"--db", scratch.db.string(), "run", data("deb-bug.yaml")},
                       std::chrono::minutes(15));
    auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "kernel-panic");
    std::string evidence = one(scratch.db, "SELECT evidence FROM samples");
    EXPECT_NE(one(scratch.db,
                  "SELECT count(*) FROM error_lines WHERE line LIKE '%kernel BUG at %bug.c:%'"),
              "0");
    EXPECT_NE(evidence.find("Kernel panic"), std::string::npos) << evidence;
    // The workload timeout is 10 minutes; a panic ends the guest at once.
    EXPECT_LT(seconds.count(), 300) << run.out;
}

TEST(Module, ScratchDiskIsABlockDeviceAtItsFixedPath) {
    Scratch scratch("deb-scratch");
    auto run = run_rig({"--db", scratch.db.string(), "run", data("deb-scratch.yaml")},
                       std::chrono::minutes(15));
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(metric(scratch.db, "scratch.bytes"), "16777216.0 bytes");
}

TEST(Module, GitKernelSharesTheKernelsSuitesBuildFolder) {
    Scratch scratch("git-metric");
    fs::path scenario = scratch.dir / "git-metric.yaml";
    std::ofstream(scenario) << "name: module-git-metric\nkernels:\n  - {name: v6.1, git: "
                            << rig::test::linux_repo().string()
                            << ", ref: " << rig::test::k_linux_base_tag
                            << ", config: [base, release]}\n"
                            << "workload:\n  module: " << data("metric.c")
                            << "\n  params: {answer: 7}\n"
                            << "timeouts: {boot: 5m, workload: 5m}\n";
    auto run =
        run_rig({"--db", scratch.db.string(), "run", scenario.string()}, std::chrono::minutes(90));
    ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
    EXPECT_EQ(one(scratch.db, "SELECT outcome FROM samples"), "errors");
    EXPECT_EQ(metric(scratch.db, "test.answer"), "7.0 units");
    // The kernel came from the cache the kernels suite filled.
    EXPECT_NE(run.out.find("cached"), std::string::npos) << run.out;
}

} // namespace
