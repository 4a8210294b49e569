// SPDX-License-Identifier: MIT
// `rig plan`, exit codes and subcommand wiring, through the built binary.
#include "golden.hpp"
#include "rig_binary.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <unistd.h>

using rig::test::expect_golden;
using rig::test::run_rig;

namespace {

std::set<std::string> ids_of(const std::string& json_text) {
    std::set<std::string> ids;
    auto plan = nlohmann::json::parse(json_text);
    for (const auto& cell : plan["cells"])
        ids.insert(cell["id"].get<std::string>());
    return ids;
}

} // namespace

TEST(Plan, QuickstartText) {
    auto result = run_rig({"plan", "scenarios/quickstart.yaml"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    expect_golden(result.out, "plan-quickstart.txt");
}

TEST(Plan, SeedMatrixJson) {
    auto result = run_rig({"plan", "--format", "json", "scenarios/9p-cache-msize.yaml"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    expect_golden(result.out, "plan-9p-cache-msize.json");
    auto parsed = nlohmann::json::parse(result.out);
    EXPECT_EQ(parsed["count"], parsed["cells"].size());
}

TEST(Plan, ReorderedScenarioKeepsEveryCellId) {
    auto original = run_rig({"plan", "--format", "json", "scenarios/9p-cache-msize.yaml"});
    auto reordered =
        run_rig({"plan", "--format", "json", "tests/data/good/9p-cache-msize-reordered.yaml"});
    ASSERT_EQ(original.exit_code, 0) << original.err;
    ASSERT_EQ(reordered.exit_code, 0) << reordered.err;
    EXPECT_EQ(ids_of(original.out), ids_of(reordered.out));
    EXPECT_EQ(ids_of(original.out).size(), 12u); // 2 kernels x (2 msize x 2 cache + 2 virtiofs)
}

TEST(Plan, BadScenarioIsAConfigError) {
    auto result = run_rig({"plan", "tests/data/bad/unknown-key.yaml"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("unknown-key.yaml:"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("did you mean"), std::string::npos) << result.err;
}

TEST(Plan, MissingFileIsAConfigError) {
    auto result = run_rig({"plan", "tests/data/no-such-file.yaml"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("no-such-file.yaml"), std::string::npos) << result.err;
}

// Bad input changes nothing: a scenario that fails validation leaves no database, and a
// command that only reads writes nothing into a file that is not a rig database.
TEST(Cli, BadInputLeavesNoDatabaseAndWritesIntoNoFile) {
    auto dir = std::filesystem::temp_directory_path() /
               ("rig-cli-bad-input-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto run = run_rig({"--db", (dir / "results" / "rig.db").string(), "run",
                        "tests/data/bad/tab-indentation.yaml"});
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("tab-indentation.yaml:6:1: a tab in indentation"), std::string::npos)
        << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "results")) << "no database, nor its folder";

    auto empty = dir / "empty.db";
    std::ofstream(empty).close();
    auto report = run_rig({"--db", empty.string(), "report"});
    EXPECT_EQ(report.exit_code, 3);
    EXPECT_NE(report.err.find(empty.string() + " is not a rig database"), std::string::npos)
        << report.err;
    EXPECT_EQ(std::filesystem::file_size(empty), 0u);
    EXPECT_FALSE(std::filesystem::exists(empty.string() + "-wal"));
    auto status = run_rig({"--db", empty.string(), "bisect", "status"});
    EXPECT_EQ(status.exit_code, 3) << status.err;
    EXPECT_EQ(std::filesystem::file_size(empty), 0u);

    // rig doctor names a database that is not one, and fails.
    auto doctor = run_rig({"--db", empty.string(), "doctor"});
    EXPECT_EQ(doctor.exit_code, 3);
    EXPECT_NE(rig::test::doctor_line(doctor.out, "database").find("FAILED"), std::string::npos)
        << doctor.out;
    EXPECT_EQ(std::filesystem::file_size(empty), 0u);
    std::filesystem::remove_all(dir);
}

TEST(Cli, UsageErrorsExitTwo) {
    EXPECT_EQ(run_rig({}).exit_code, 2);
    EXPECT_EQ(run_rig({"frobnicate"}).exit_code, 2);
    EXPECT_EQ(run_rig({"plan"}).exit_code, 2);
    EXPECT_EQ(run_rig({"plan", "--format", "xml", "scenarios/quickstart.yaml"}).exit_code, 2);
}

TEST(Cli, EverySubcommandHasHelp) {
    for (const char* sub : {"plan", "run", "report", "bisect", "kernel", "doctor"}) {
        auto result = run_rig({sub, "--help"});
        EXPECT_EQ(result.exit_code, 0) << sub;
        EXPECT_NE(result.out.find("Usage"), std::string::npos) << sub << ": " << result.out;
    }
}

TEST(Cli, DoctorNamesEveryCheck) {
    auto result = run_rig({"doctor"});
    EXPECT_TRUE(result.exit_code == 0 || result.exit_code == 3) << result.exit_code;
    for (const char* check : {"qemu", "accelerator", "virtiofsd", "busybox-static", "git", "make",
                              "gcc", "libvirtd", "disk", "database"})
        EXPECT_NE(result.out.find(check), std::string::npos) << check << "\n" << result.out;
}

// git is for git kernels and bisects only: its absence is a warning, and the packages
// rig says to install are those that are missing.
TEST(Cli, DoctorWithoutGitOnlyWarns) {
    auto empty =
        std::filesystem::temp_directory_path() / ("rig-doctor-path-" + std::to_string(::getpid()));
    std::filesystem::create_directories(empty);
    auto result = run_rig({"doctor"}, std::chrono::minutes(2), {{"PATH", empty.string()}});
    std::filesystem::remove(empty);
    EXPECT_EQ(result.exit_code, 3) << result.out << result.err; // QEMU is missing too
    const std::string& out = result.out;
    EXPECT_TRUE(std::regex_match(rig::test::doctor_line(out, "git"),
                                 std::regex(R"(git +warn +.*\[package: git\])")))
        << out;
    std::string install = out.substr(std::min(out.find("apt-get install "), out.size()));
    install = " " + install.substr(0, install.find('\n')) + " ";
    EXPECT_NE(install.find(" qemu-system-x86 "), std::string::npos) << out;
    EXPECT_EQ(install.find(" git "), std::string::npos) << out;
}

TEST(Cli, BisectNeedsASubcommandAndItsRequiredOptions) {
    EXPECT_EQ(run_rig({"bisect"}).exit_code, 2);
    auto start = run_rig({"bisect", "start", "scenarios/quickstart.yaml", "--good", "HEAD"});
    EXPECT_EQ(start.exit_code, 2);
    EXPECT_NE((start.out + start.err).find("--bad"), std::string::npos) << start.out << start.err;
    // --cell is needed only to choose among several cells, and then the choices are listed.
    auto unnamed = run_rig(
        {"bisect", "start", "scenarios/quickstart.yaml", "--good", "HEAD~1", "--bad", "HEAD"});
    EXPECT_EQ(unnamed.exit_code, 2);
    EXPECT_NE(unnamed.err.find("cells: --cell must name exactly one of:"), std::string::npos)
        << unnamed.out << unnamed.err;
}

// --db is a global option, and a user writes it where they think of it: after the
// subcommand works as well as before it.
TEST(Cli, GlobalOptionsAfterTheSubcommand) {
    auto dir =
        std::filesystem::temp_directory_path() / ("rig-cli-db-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    // Commands that only read name the database they were given, and create none.
    auto before = run_rig({"--db", (dir / "before.db").string(), "kernel", "list"});
    EXPECT_EQ(before.exit_code, 2);
    EXPECT_NE(before.err.find((dir / "before.db").string() + " (it does not exist)"),
              std::string::npos)
        << before.err;
    auto after = run_rig({"kernel", "list", "--db", (dir / "after.db").string()});
    EXPECT_NE(after.err.find((dir / "after.db").string()), std::string::npos) << after.err;
    auto status = run_rig({"bisect", "status", "--db", (dir / "bisect.db").string()});
    EXPECT_NE(status.err.find((dir / "bisect.db").string()), std::string::npos) << status.err;
    for (const char* name : {"before.db", "after.db", "bisect.db"})
        EXPECT_FALSE(std::filesystem::exists(dir / name)) << name;
    std::filesystem::remove_all(dir);
}
