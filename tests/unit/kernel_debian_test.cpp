// SPDX-License-Identifier: MIT
// Debian kernel names: series, image packages and apt-cache's output, without an archive.
#include "kernel/debian.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using namespace rig;
using namespace rig::kernel;

TEST(DebianName, SeriesIsMajorDotMinorOnly) {
    EXPECT_TRUE(core::is_debian_series("linux-image-6.1"));
    EXPECT_TRUE(core::is_debian_series("linux-image-6.12"));
    EXPECT_FALSE(core::is_debian_series("linux-image-6.1.0-57-amd64"));
    EXPECT_FALSE(core::is_debian_series("linux-image-amd64"));
    EXPECT_FALSE(core::is_debian_series("linux-image-6"));
    EXPECT_FALSE(core::is_debian_series("linux-image-6."));
    EXPECT_FALSE(core::is_debian_series("linux-headers-6.1"));
}

TEST(DebianName, ImagePackagesNameTheirSeries) {
    EXPECT_EQ(debian_series_of("linux-image-6.1.0-57-amd64"), "linux-image-6.1");
    EXPECT_EQ(debian_series_of("linux-image-6.1.0-57-cloud-amd64-unsigned"), "linux-image-6.1");
    EXPECT_EQ(debian_series_of("linux-image-6.12.113+deb12-amd64-unsigned"), "linux-image-6.12");
    EXPECT_EQ(debian_series_of("linux-image-6.1.0-57-amd64-dbg"), std::nullopt);
    EXPECT_EQ(debian_series_of("linux-image-6.12-amd64"), std::nullopt) << "a metapackage";
    EXPECT_EQ(debian_series_of("linux-image-amd64"), std::nullopt);
}

TEST(DebianName, SeriesMembershipNeedsTheFlavour) {
    EXPECT_TRUE(in_debian_series("linux-image-6.1.0-57-amd64", "linux-image-6.1", "amd64"));
    EXPECT_TRUE(
        in_debian_series("linux-image-6.1.0-57-amd64-unsigned", "linux-image-6.1", "amd64"));
    EXPECT_FALSE(in_debian_series("linux-image-6.1.0-57-cloud-amd64", "linux-image-6.1", "amd64"));
    EXPECT_TRUE(
        in_debian_series("linux-image-6.1.0-57-cloud-amd64", "linux-image-6.1", "cloud-amd64"));
    EXPECT_FALSE(in_debian_series("linux-image-6.12.117+deb12-amd64", "linux-image-6.1", "amd64"))
        << "6.12 is not 6.1";
    EXPECT_FALSE(in_debian_series("linux-image-6.1.0-57-amd64-dbg", "linux-image-6.1", "amd64"));
}

TEST(DebianName, NewestByTheNumberAfterTheSeriesAndSignedFirst) {
    EXPECT_TRUE(newer_image("linux-image-6.1.0-57-amd64", "linux-image-6.1.0-9-amd64"))
        << "numbers compare as numbers, not text";
    EXPECT_TRUE(newer_image("linux-image-6.12.117+deb12-amd64",
                            "linux-image-6.12.113+deb12-amd64-unsigned"));
    EXPECT_TRUE(newer_image("linux-image-6.1.0-57-amd64", "linux-image-6.1.0-57-amd64-unsigned"));
    EXPECT_FALSE(newer_image("linux-image-6.1.0-57-amd64-unsigned", "linux-image-6.1.0-57-amd64"));
    EXPECT_FALSE(newer_image("linux-image-6.1.0-57-amd64", "linux-image-6.1.0-57-amd64"));
}

TEST(DebianName, PolicyGivesCandidatesAndDropsThoseWithNone) {
    const char* text = "linux-image-6.1.0-57-amd64:\n"
                       "  Installed: (none)\n"
                       "  Candidate: 6.1.192-3\n"
                       "  Version table:\n"
                       "     6.1.192-3 500\n"
                       "        500 http://deb.example/debian bookworm/main amd64 Packages\n"
                       "linux-image-6.1.0-48-amd64:\n"
                       "  Installed: (none)\n"
                       "  Candidate: (none)\n"
                       "  Version table:\n"
                       "linux-image-6.12.117+deb12-amd64:\n"
                       "  Installed: 6.12.117-1~deb12u1\n"
                       "  Candidate: 6.12.117-1~deb12u1\n";
    auto policy = parse_apt_policy(text);
    ASSERT_EQ(policy.size(), 2u);
    EXPECT_EQ(policy.at("linux-image-6.1.0-57-amd64"), "6.1.192-3");
    EXPECT_EQ(policy.at("linux-image-6.12.117+deb12-amd64"), "6.12.117-1~deb12u1");
}

TEST(DebianName, MetapackageDependsOnOneImage) {
    const char* meta = "Package: linux-image-amd64\n"
                       "Version: 6.1.192-3\n"
                       "Depends: linux-image-6.1.0-57-amd64 (= 6.1.192-3)\n"
                       "Description: Linux for 64-bit PCs (meta-package)\n";
    EXPECT_EQ(image_dependencies(meta), std::vector<std::string>{"linux-image-6.1.0-57-amd64"});
    const char* image = "Package: linux-image-6.1.0-57-amd64\n"
                        "Depends: kmod, linux-base (>= 4.3~), initramfs-tools (>= 0.120+deb8u2) "
                        "| linux-initramfs-tool\n";
    EXPECT_TRUE(image_dependencies(image).empty());
}

TEST(DebianName, SeriesAmongPackagesAreDistinctAndOrdered) {
    EXPECT_EQ(series_among({"linux-image-6.12.117+deb12-amd64", "linux-image-6.1.0-57-amd64",
                            "linux-image-6.1.0-56-amd64", "linux-image-amd64",
                            "linux-image-6.1.0-57-amd64-dbg"}),
              (std::vector<std::string>{"linux-image-6.1", "linux-image-6.12"}));
}
