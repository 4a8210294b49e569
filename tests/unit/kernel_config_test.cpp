// SPDX-License-Identifier: MIT
// Config fragments: parsing, composing, merging over tinyconfig and checking the result.
#include "kernel/config.hpp"
#include "temp_dir.hpp"

#include <fstream>
#include <gtest/gtest.h>

namespace rig::kernel {
namespace {

using rig::test::TempDir;

TEST(KernelConfig, ParsesAssignmentsAndNotSetLines) {
    auto values = parse_config("# comment\nCONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x y\"\n"
                               "CONFIG_D=0x10\nnot a line\nCONFIG_A=m\n");
    EXPECT_EQ(values.at("CONFIG_A"), "m"); // later lines win
    EXPECT_EQ(values.at("CONFIG_B"), "n");
    EXPECT_EQ(values.at("CONFIG_C"), "\"x y\"");
    EXPECT_EQ(values.at("CONFIG_D"), "0x10");
    EXPECT_EQ(values.size(), 4u);
}

TEST(KernelConfig, OptionValuesQuoteOnlyStrings) {
    EXPECT_EQ(option_value("y"), "y");
    EXPECT_EQ(option_value("n"), "n");
    EXPECT_EQ(option_value("8"), "8");
    EXPECT_EQ(option_value("-1"), "-1");
    EXPECT_EQ(option_value("0x1f"), "0x1f");
    EXPECT_EQ(option_value("console=ttyS0"), "\"console=ttyS0\"");
    EXPECT_EQ(option_value("a\"b"), "\"a\\\"b\"");
}

TEST(KernelConfig, BuiltinFragmentsAreThereAndBaseHas9pWithInet) {
    auto base = fragment_text("base", {});
    ASSERT_TRUE(base) << base.error().message;
    auto values = parse_config(*base);
    for (const char* symbol :
         {"CONFIG_9P_FS", "CONFIG_NET_9P", "CONFIG_NET_9P_VIRTIO", "CONFIG_INET",
          "CONFIG_VIRTIO_PCI", "CONFIG_SERIAL_8250_CONSOLE", "CONFIG_VIRTIO_FS",
          "CONFIG_PVPANIC_PCI", "CONFIG_PVH", "CONFIG_DEVTMPFS", "CONFIG_BLK_DEV_INITRD"})
        EXPECT_EQ(values[symbol], "y") << symbol;
    EXPECT_FALSE(uses_modules(values)) << "base builds everything in";
    EXPECT_EQ(image_target(values), "vmlinux") << "base boots through PVH: no bzImage";
    EXPECT_EQ(image_target(parse_config("# CONFIG_PVH is not set\n")), "bzImage");
    auto debug = parse_config(*fragment_text("debug", {}));
    auto release = parse_config(*fragment_text("release", {}));
    EXPECT_EQ(debug["CONFIG_PROVE_LOCKING"], "y");
    EXPECT_EQ(release["CONFIG_PROVE_LOCKING"], "n");
}

TEST(KernelConfig, FragmentFilesComeBeforeBuiltinOnes) {
    TempDir dir;
    std::ofstream(dir.path() / "base.config") << "CONFIG_MINE=y\n";
    auto text = fragment_text("base", {dir.path() / "missing", dir.path()});
    ASSERT_TRUE(text);
    EXPECT_EQ(*text, "CONFIG_MINE=y\n");
}

TEST(KernelConfig, UnknownFragmentIsAConfigErrorListingKnownOnes) {
    auto text = fragment_text("debgu", {});
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().kind, ErrorKind::config);
    EXPECT_NE(text.error().message.find("'debgu'"), std::string::npos);
    EXPECT_NE(text.error().message.find("base, debug, release, stats"), std::string::npos);
}

TEST(KernelConfig, ComposeAppliesFragmentsInOrderThenOptions) {
    auto request = compose({{"a", "CONFIG_X=y\nCONFIG_Y=y\n"}, {"b", "# CONFIG_Y is not set\n"}},
                           {{"CONFIG_X", "n"}, {"CONFIG_CMDLINE", "quiet"}});
    EXPECT_EQ(request.values.at("CONFIG_X"), "n");
    EXPECT_EQ(request.values.at("CONFIG_Y"), "n");
    EXPECT_EQ(request.values.at("CONFIG_CMDLINE"), "\"quiet\"");
    EXPECT_FALSE(request.modules);
    // What is set, not how it is written, makes the hash text.
    auto reformatted = compose(
        {{"a", "# a comment\nCONFIG_Y=y\n\nCONFIG_X=y\n"}, {"b", "# CONFIG_Y is not set\n"}},
        {{"CONFIG_X", "n"}, {"CONFIG_CMDLINE", "quiet"}});
    EXPECT_EQ(request.text, reformatted.text);
    auto other = compose({{"a", "CONFIG_X=y\n"}}, {});
    EXPECT_NE(request.text, other.text);
}

// A wish is written like a request but not checked, and makes a config of its own.
TEST(KernelConfig, AWishIsWrittenButNotChecked) {
    auto request =
        compose({{"a", "CONFIG_X=y\n"}}, {{"CONFIG_Y", "?y"}, {"CONFIG_S", "?some text"}});
    EXPECT_EQ(request.values.at("CONFIG_Y"), "y");
    EXPECT_EQ(request.values.at("CONFIG_S"), "\"some text\"");
    EXPECT_EQ(request.checked.count("CONFIG_Y"), 0u);
    EXPECT_EQ(request.checked.at("CONFIG_X"), "y");
    EXPECT_NE(request.text.find("# wishes\nCONFIG_S=\"some text\"\nCONFIG_Y=y\n"),
              std::string::npos)
        << request.text;
    EXPECT_EQ(parse_config(merge("", request.values)).at("CONFIG_Y"), "y");
    EXPECT_TRUE(unmet(request.checked, {{"CONFIG_X", "y"}}).empty());
    auto asked = compose({{"a", "CONFIG_X=y\n"}}, {{"CONFIG_Y", "y"}, {"CONFIG_S", "?some text"}});
    EXPECT_NE(asked.text, request.text);
    EXPECT_EQ(asked.checked.at("CONFIG_Y"), "y");
    // A wish overrides a fragment's value, and then that value is not checked either.
    auto over = compose({{"a", "CONFIG_X=y\n"}}, {{"CONFIG_X", "?n"}});
    EXPECT_EQ(over.values.at("CONFIG_X"), "n");
    EXPECT_EQ(over.checked.count("CONFIG_X"), 0u);
}

TEST(KernelConfig, ModuleOptionsRequestModules) {
    auto request = compose({{"base", "CONFIG_9P_FS=y\n"}}, {{"CONFIG_EXT4_FS", "m"}});
    EXPECT_TRUE(request.modules);
    EXPECT_EQ(request.values.at("CONFIG_MODULES"), "y");
}

TEST(KernelConfig, MergeReplacesRequestedLines) {
    std::string merged = merge("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n",
                               {{"CONFIG_B", "y"}, {"CONFIG_C", "n"}});
    auto values = parse_config(merged);
    EXPECT_EQ(values.at("CONFIG_A"), "y");
    EXPECT_EQ(values.at("CONFIG_B"), "y");
    EXPECT_EQ(values.at("CONFIG_C"), "n");
    EXPECT_EQ(merged.find("CONFIG_C=y"), std::string::npos);
}

TEST(KernelConfig, UnmetNamesEachMissingOption) {
    auto problems = unmet({{"CONFIG_9P_FS", "y"},
                           {"CONFIG_DEBUG_LIST", "n"},
                           {"CONFIG_S", "\"a\""},
                           {"CONFIG_GONE", "n"}},
                          {{"CONFIG_DEBUG_LIST", "y"}, {"CONFIG_S", "\"a\""}});
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_NE(problems[0].find("CONFIG_9P_FS=y requested"), std::string::npos) << problems[0];
    EXPECT_NE(problems[0].find("not set"), std::string::npos);
    EXPECT_NE(problems[1].find("CONFIG_DEBUG_LIST"), std::string::npos) << problems[1];
    EXPECT_NE(problems[1].find("has CONFIG_DEBUG_LIST=y"), std::string::npos);
}

} // namespace
} // namespace rig::kernel
