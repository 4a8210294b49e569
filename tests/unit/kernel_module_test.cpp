// SPDX-License-Identifier: MIT
// Tests of kernel/module: the source hash and cache key, make's argument vector, how a
// source is staged as a Kbuild folder, and the Debian headers packages' dependencies.
#include "kernel/debian.hpp"
#include "kernel/module.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"

#include <fstream>
#include <gtest/gtest.h>

using namespace rig::kernel;
using rig::test::TempDir;
namespace fs = std::filesystem;

TEST(ModuleBuild, MakeArgvNamesTheTreeTheBuildFolderAndTheModule) {
    EXPECT_EQ(module_make_argv("/src", "/build", "/m"),
              (std::vector<std::string>{"make", "-C", "/src", "O=/build", "M=/m", "modules"}));
    // A headers folder is a build folder on its own: no O=.
    EXPECT_EQ(module_make_argv("/usr/src/linux-headers-6.1.0-57-amd64", {}, "/m", {"CC=gcc"}),
              (std::vector<std::string>{"make", "-C", "/usr/src/linux-headers-6.1.0-57-amd64",
                                        "M=/m", "CC=gcc", "modules"}));
}

TEST(ModuleBuild, SourceHashFollowsContentAndNamesAndTheKeyTheKernel) {
    TempDir dir;
    fs::create_directories(dir.path() / "a");
    std::ofstream(dir.path() / "a" / "bench.c") << "int x;\n";
    std::ofstream(dir.path() / "a" / "Kbuild") << "obj-m := bench.o\n";
    auto first = module_source_hash(dir.path() / "a");
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*module_source_hash(dir.path() / "a"), *first);
    std::ofstream(dir.path() / "a" / "bench.c") << "int y;\n";
    EXPECT_NE(*module_source_hash(dir.path() / "a"), *first);
    EXPECT_NE(*module_source_hash(dir.path() / "a" / "bench.c"),
              *module_source_hash(dir.path() / "a"));
    EXPECT_FALSE(module_source_hash(dir.path() / "missing.c"));

    EXPECT_EQ(module_cache_key("s", "k1").size(), 16u);
    EXPECT_EQ(module_cache_key("s", "k1"), module_cache_key("s", "k1"));
    EXPECT_NE(module_cache_key("s", "k1"), module_cache_key("s", "k2"));
    EXPECT_NE(module_cache_key("s", "k1"), module_cache_key("t", "k1"));
}

TEST(ModuleBuild, ALoneFileGetsAKbuildAndAFolderNeedsOne) {
    TempDir dir;
    std::ofstream(dir.path() / "bench.c") << "int x;\n";
    ASSERT_TRUE(stage_module_source(dir.path() / "bench.c", dir.path() / "staged"));
    EXPECT_EQ(rig::util::read_file(dir.path() / "staged" / "Kbuild"), "obj-m := bench.o\n");
    EXPECT_TRUE(fs::exists(dir.path() / "staged" / "bench.c"));

    fs::create_directories(dir.path() / "bare");
    std::ofstream(dir.path() / "bare" / "bench.c") << "int x;\n";
    auto bare = stage_module_source(dir.path() / "bare", dir.path() / "staged-bare");
    ASSERT_FALSE(bare);
    EXPECT_EQ(bare.error().kind, rig::ErrorKind::config);

    std::ofstream(dir.path() / "notes.txt") << "x\n";
    EXPECT_FALSE(stage_module_source(dir.path() / "notes.txt", dir.path() / "staged-txt"));
}

TEST(DebianHeaders, DependsNameTheCommonHalfAndKbuild) {
    EXPECT_EQ(header_dependencies("Package: linux-headers-6.1.0-57-amd64\n"
                                  "Depends: linux-headers-6.1.0-57-common (= 6.1.192-3), "
                                  "linux-kbuild-6.1 (>= 6.1.192-3), linux-compiler-gcc-12-x86\n"),
              (std::vector<std::string>{"linux-headers-6.1.0-57-common", "linux-kbuild-6.1"}));
    EXPECT_EQ(header_dependencies(
                  "Depends: linux-base (>= 4.12~), linux-headers-6.12.117+deb12-common (= "
                  "6.12.117-1~deb12u1), linux-image-6.12.117+deb12-amd64 (= 6.12.117-1~deb12u1) "
                  "| linux-image-6.12.117+deb12-amd64-unsigned (= 6.12.117-1~deb12u1), "
                  "linux-kbuild-6.12.117+deb12, gcc-12\n"),
              (std::vector<std::string>{"linux-headers-6.12.117+deb12-common",
                                        "linux-kbuild-6.12.117+deb12"}));
}
