// SPDX-License-Identifier: MIT
#include "host/tsc.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace rig;

TEST(Tsc, SteadyOnlyWithBothFlags) {
    EXPECT_TRUE(host::steady_tsc("processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good "
                                 "nopl nonstop_tsc cpuid\n"));
    EXPECT_FALSE(host::steady_tsc("flags\t\t: fpu tsc constant_tsc\n"));
    EXPECT_FALSE(host::steady_tsc("flags\t\t: fpu tsc nonstop_tsc\n"));
    // A flag's name inside another's is not the flag.
    EXPECT_FALSE(host::steady_tsc("flags\t\t: xconstant_tsc nonstop_tscx\n"));
    EXPECT_FALSE(host::steady_tsc(""));
}

// The measured rate is the one the kernel's own calibration reports for this host (to a
// tenth of a percent), wherever the TSC is steady.
TEST(Tsc, MeasuredOnceWhereSteady) {
    std::ifstream in("/proc/cpuinfo");
    std::stringstream text;
    text << in.rdbuf();
    std::optional<uint64_t> khz = host::tsc_khz();
#if defined(__x86_64__)
    ASSERT_EQ(khz.has_value(), host::steady_tsc(text.str()));
#endif
    if (!khz)
        return;
    EXPECT_GT(*khz, 100'000u);    // 100 MHz
    EXPECT_LT(*khz, 10'000'000u); // 10 GHz
    EXPECT_EQ(host::tsc_khz(), khz);
    // /proc/cpuinfo's "cpu MHz" is the TSC's rate where the kernel knows it (tsc_known_freq).
    if (text.str().find(" tsc_known_freq") == std::string::npos)
        return;
    std::string line = text.str().substr(text.str().find("cpu MHz"));
    double mhz = std::stod(line.substr(line.find(':') + 1));
    EXPECT_NEAR(static_cast<double>(*khz), mhz * 1000, mhz);
}
