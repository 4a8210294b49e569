// SPDX-License-Identifier: MIT
// The Debian package end to end, through tests/package/deb-test as a user would run it:
// dpkg-buildpackage, lintian, `apt install ./rig_*.deb` in a fresh root (this machine's
// packages under an overlay), `rig doctor` and one real QEMU sample there as a normal
// user, then the purge. meson test builds the package with DEB_BUILD_OPTIONS=noopt: the
// -O2 build of a user's package would not fit CI's time.
#include "golden.hpp"
#include "proc/process.hpp"

#include <gtest/gtest.h>
#include <iostream>

namespace {

TEST(Package, BuildsPassesLintianInstallsAndRunsASampleAsANormalUser) {
    rig::proc::RunOptions options;
    options.cwd = rig::test::source_root();
    options.timeout = std::chrono::minutes(25);
    auto result =
        rig::proc::run({(rig::test::source_root() / "tests/package/deb-test").string()}, options);
    ASSERT_TRUE(result) << result.error().message;
    std::cout << result->out;
    ASSERT_EQ(result->exit_code, 0) << result->out << result->err;
    for (const std::string step :
         {"dpkg-buildpackage: rig_", "lintian", "apt install ./rig_*.deb",
          "rig doctor as a normal user", "rig run one-sample.yaml as a normal user",
          "apt purge rig", "passed in"})
        EXPECT_NE(result->out.find("deb-test: " + step), std::string::npos) << step;
    // The installed rig's own table: the one sample ran to its end.
    EXPECT_NE(result->out.find("1 ok"), std::string::npos) << result->out;
}

} // namespace
