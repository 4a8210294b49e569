// SPDX-License-Identifier: MIT
// Debian kernels by name: a series, a metapackage and an exact package resolve through
// apt to one package; names apt does not know are located errors that list what exists;
// a download cut short is fetched again and never unpacked. `rig kernel fetch`, no guest.
#include "rig_binary.hpp"
#include "scratch.hpp"

#include <fstream>
#include <regex>

using namespace rig::test;
namespace fs = std::filesystem;

namespace {

fs::path write_scenario(const Scratch& scratch, const std::string& kernels) {
    fs::path file = scratch.dir / "kernels.yaml";
    std::ofstream(file) << "name: debian-names\nkernels:\n"
                        << kernels << "workload:\n  generate: {}\n";
    return file;
}

// "kernel NAME: PACKAGE VERSION, release ..." -> PACKAGE, from `rig kernel fetch`.
std::string fetched_package(const std::string& out, const std::string& kernel) {
    std::smatch match;
    std::regex line("kernel " + kernel + ": (linux-image-[^ ]+) [^ ]+, release ");
    return std::regex_search(out, match, line) ? match[1].str() : "";
}

} // namespace

TEST(Debian, SeriesMetapackageAndExactNameResolveToOnePackage) {
    Scratch scratch("debian-names");
    auto series =
        run_rig({"--db", scratch.db, "kernel", "fetch",
                 write_scenario(scratch, "  - {name: series, debian: linux-image-6.1}\n"
                                         "  - {name: meta, debian: linux-image-amd64}\n")},
                std::chrono::minutes(10));
    ASSERT_EQ(series.exit_code, 0) << series.out << series.err;
    const std::string package = fetched_package(series.out, "series");
    EXPECT_TRUE(std::regex_match(package, std::regex(R"(linux-image-6\.1\.0-[0-9]+-amd64)")))
        << series.out;
    EXPECT_NE(series.out.find("linux-image-6.1 is " + package), std::string::npos) << series.out;
    // Bookworm's linux-image-amd64 follows the 6.1 series.
    EXPECT_EQ(fetched_package(series.out, "meta"), package) << series.out;

    auto exact = run_rig({"--db", scratch.db, "kernel", "fetch",
                          write_scenario(scratch, "  - {name: exact, debian: " + package + "}\n")});
    ASSERT_EQ(exact.exit_code, 0) << exact.out << exact.err;
    EXPECT_EQ(fetched_package(exact.out, "exact"), package);
    EXPECT_EQ(exact.out.find("fetching"), std::string::npos) << "a cache hit: " << exact.out;
    EXPECT_EQ(one(scratch.db, "SELECT count(DISTINCT package) || ' ' || count(*) FROM "
                              "kernel_artifacts"),
              "1 1")
        << "three names, one artifact";
}

TEST(Debian, AnUnknownPackageListsItsSeriesAndSuggestsTheSeriesName) {
    Scratch scratch("debian-unknown");
    auto result =
        run_rig({"--db", scratch.db, "kernel", "fetch",
                 write_scenario(scratch, "  - {name: old, debian: linux-image-6.1.0-9-amd64}\n")});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find("kernels.yaml:3:5: kernels[0].debian: Debian has no package "
                              "linux-image-6.1.0-9-amd64"),
              std::string::npos)
        << result.err;
    EXPECT_TRUE(
        std::regex_search(result.err, std::regex(R"(has linux-image-6\.1\.0-[0-9]+-amd64, )")))
        << result.err;
    EXPECT_NE(result.err.find("Write `debian: linux-image-6.1` to follow the series"),
              std::string::npos)
        << result.err;
}

TEST(Debian, AnUnknownSeriesListsTheSeriesTheArchiveHas) {
    Scratch scratch("debian-series-unknown");
    auto result = run_rig({"--db", scratch.db, "kernel", "fetch",
                           write_scenario(scratch, "  - {name: k, debian: linux-image-5.10}\n")});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find("no linux-image-5.10 package of flavour amd64; its series: "
                              "linux-image-6.1, linux-image-6.12"),
              std::string::npos)
        << result.err;
}

TEST(Debian, ADownloadCutShortIsFetchedAgainAndNeverUnpacked) {
    Scratch scratch("debian-truncated");
    const fs::path cache = scratch.dir / "cache";
    const std::map<std::string, std::string> own_cache{{"RIG_CACHE", cache.string()}};
    const fs::path scenario = write_scenario(scratch, "  - {name: k, debian: linux-image-6.1}\n");
    auto first =
        run_rig({"--db", scratch.db, "kernel", "fetch", scenario}, std::chrono::minutes(10));
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const std::string package = fetched_package(first.out, "k");
    ASSERT_FALSE(package.empty()) << first.out;

    // What a killed apt-get download leaves: the first half of the .deb, where rig keeps
    // downloads until their kernel is in the cache.
    const fs::path folder = cache / "debs" / package;
    fs::create_directories(folder);
    rig::proc::RunOptions options;
    options.cwd = folder;
    auto download = rig::proc::run({"apt-get", "download", package}, options);
    ASSERT_TRUE(download && download->exit_code == 0);
    fs::path deb;
    for (const auto& entry : fs::directory_iterator(folder))
        deb = entry.path();
    fs::resize_file(deb, fs::file_size(deb) / 2);

    auto again = run_rig({"--db", scratch.db, "kernel", "fetch", scenario},
                         std::chrono::minutes(10), own_cache);
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("is not whole (an interrupted download?): fetching it again"),
              std::string::npos)
        << again.out;
    EXPECT_EQ(fetched_package(again.out, "k"), package);
    EXPECT_FALSE(fs::exists(folder)) << "the .deb goes once its kernel is in the cache";
    fs::path index = cache / "kernels" / "debian" / package;
    ASSERT_TRUE(fs::exists(index));

    auto third = run_rig({"--db", scratch.db, "kernel", "fetch", scenario}, std::chrono::minutes(2),
                         own_cache);
    ASSERT_EQ(third.exit_code, 0) << third.out << third.err;
    EXPECT_EQ(third.out.find("fetching"), std::string::npos) << "fetched once: " << third.out;
}
