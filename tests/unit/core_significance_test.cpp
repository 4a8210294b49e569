// SPDX-License-Identifier: MIT
// Tests of core/significance: p-values checked against SciPy 1.10.1 (Debian 12's
// python3-scipy). Each expectation names the call that produced the reference figure.
#include "core/significance.hpp"

#include <gtest/gtest.h>

using namespace rig::core;

namespace {

// Relative agreement: SciPy computes the t distribution with Cephes, Boost.Math with its
// own series; both are accurate to far better than this.
constexpr double k_tolerance = 1e-9;

const std::vector<double> k_fast{12.1, 11.8, 12.6, 13.0, 12.3};
const std::vector<double> k_slow{13.4, 13.9, 12.9, 14.2, 13.6, 14.8};
// host-facts.md: one kernel's three boots against one about 25 % slower.
const std::vector<double> k_kernel_a{6.96, 7.72, 8.78};
const std::vector<double> k_kernel_b{9.52, 9.52, 11.25};

} // namespace

TEST(Welch, MatchesScipy) {
    // scipy.stats.ttest_ind(k_fast, k_slow, equal_var=False)
    //   statistic=-4.241413603742319, pvalue=0.0022824866381382946
    auto result = welch_t_test(k_fast, k_slow);
    ASSERT_TRUE(result);
    EXPECT_NEAR(result->statistic, -4.241413603742319, 1e-12);
    EXPECT_NEAR(result->p, 0.0022824866381382946, 0.0022824866381382946 * k_tolerance);
    // scipy.stats.ttest_ind([6.96, 7.72, 8.78], [9.52, 9.52, 11.25], equal_var=False)
    //   statistic=-2.9124012156248535, pvalue=0.04398741114165027
    result = welch_t_test(k_kernel_a, k_kernel_b);
    ASSERT_TRUE(result);
    EXPECT_NEAR(result->statistic, -2.9124012156248535, 1e-12);
    EXPECT_NEAR(result->p, 0.04398741114165027, 0.04398741114165027 * k_tolerance);
}

TEST(Welch, SymmetricAndUndefinedCases) {
    auto ab = welch_t_test(k_fast, k_slow);
    auto ba = welch_t_test(k_slow, k_fast);
    ASSERT_TRUE(ab && ba);
    EXPECT_DOUBLE_EQ(ab->statistic, -ba->statistic);
    EXPECT_DOUBLE_EQ(ab->p, ba->p);
    EXPECT_FALSE(welch_t_test({1.0}, k_slow)) << "n=1 has no variance";
    EXPECT_FALSE(welch_t_test({2.0, 2.0}, {3.0, 3.0})) << "no spread on either side";
    auto same = welch_t_test(k_fast, k_fast);
    ASSERT_TRUE(same);
    EXPECT_DOUBLE_EQ(same->p, 1.0);
}

TEST(MannWhitney, ExactMatchesScipy) {
    // scipy.stats.mannwhitneyu(k_fast, k_slow) -> method exact (n <= 8, no ties)
    //   statistic=1.0, pvalue=0.008658008658008658
    auto result = mann_whitney_u(k_fast, k_slow);
    ASSERT_TRUE(result);
    EXPECT_DOUBLE_EQ(result->statistic, 1.0);
    EXPECT_NEAR(result->p, 0.008658008658008658, 1e-15);
    // scipy.stats.mannwhitneyu([1, 2, 3], [4, 5, 6]): statistic=0.0, pvalue=0.1
    result = mann_whitney_u({1, 2, 3}, {4, 5, 6});
    ASSERT_TRUE(result);
    EXPECT_DOUBLE_EQ(result->statistic, 0.0);
    EXPECT_NEAR(result->p, 0.1, 1e-15);
    // scipy.stats.mannwhitneyu([1.5, 2.5], range(1, 31)): statistic=3.0,
    //   pvalue=0.024193548387096774 (exact: one side is small, the other is not)
    std::vector<double> many;
    for (int i = 1; i <= 30; ++i)
        many.push_back(i);
    result = mann_whitney_u({1.5, 2.5}, many);
    ASSERT_TRUE(result);
    EXPECT_DOUBLE_EQ(result->statistic, 3.0);
    EXPECT_NEAR(result->p, 0.024193548387096774, 1e-14);
}

TEST(MannWhitney, AsymptoticMatchesScipy) {
    // Ties force the normal approximation with tie correction:
    // scipy.stats.mannwhitneyu([6.96, 7.72, 8.78], [9.52, 9.52, 11.25])
    //   statistic=0.0, pvalue=0.07652250047505922
    auto result = mann_whitney_u(k_kernel_a, k_kernel_b);
    ASSERT_TRUE(result);
    EXPECT_DOUBLE_EQ(result->statistic, 0.0);
    EXPECT_NEAR(result->p, 0.07652250047505922, 1e-12);
    // Both sides above 8 values: x = 1..12, y = x + 3.5
    // scipy.stats.mannwhitneyu(x, y): statistic=36.0, pvalue=0.040404119588223694
    std::vector<double> x, y;
    for (int i = 1; i <= 12; ++i) {
        x.push_back(i);
        y.push_back(i + 3.5);
    }
    result = mann_whitney_u(x, y);
    ASSERT_TRUE(result);
    EXPECT_DOUBLE_EQ(result->statistic, 36.0);
    EXPECT_NEAR(result->p, 0.040404119588223694, 1e-12);
}

TEST(MannWhitney, UndefinedCases) {
    EXPECT_FALSE(mann_whitney_u({}, {1.0, 2.0}));
    EXPECT_FALSE(mann_whitney_u({3.0, 3.0}, {3.0, 3.0, 3.0})) << "every value tied";
    // Two against two can never reach p < 0.05: the smallest exact p is 2/6.
    auto result = mann_whitney_u({1, 2}, {3, 4});
    ASSERT_TRUE(result);
    EXPECT_NEAR(result->p, 1.0 / 3.0, 1e-15);
}

TEST(Significance, RunTestDispatches) {
    EXPECT_DOUBLE_EQ(run_test(rig::core::Test::welch, k_fast, k_slow)->p,
                     welch_t_test(k_fast, k_slow)->p);
    EXPECT_DOUBLE_EQ(run_test(rig::core::Test::mann_whitney, k_fast, k_slow)->p,
                     mann_whitney_u(k_fast, k_slow)->p);
}

// A results database keeps each cell's values as a distribution (value and count); its
// tests must give what the values themselves give, to the last bit.
TEST(Significance, ADistributionIsTestedAsItsValues) {
    // Repeats and ties between the sides, values sorted as the report hands them over.
    std::vector<double> a{9.75, 9.75, 10.1, 10.1, 10.1, 10.3, 11.2, 11.2, 12.05};
    std::vector<double> b{10.1, 10.3, 10.3, 10.3, 10.7, 11.2, 11.9, 11.9, 11.9, 12.4};
    const Distribution da(a), db(b);
    EXPECT_EQ(da.size(), a.size());
    EXPECT_EQ(da.entries().size(), 5u);
    for (auto test : {rig::core::Test::welch, rig::core::Test::mann_whitney}) {
        auto of_values = run_test(test, a, b);
        auto of_counts = run_test(test, da, db);
        ASSERT_TRUE(of_values && of_counts);
        EXPECT_EQ(of_values->statistic, of_counts->statistic) << test_name(test);
        EXPECT_EQ(of_values->df, of_counts->df) << test_name(test);
        EXPECT_EQ(of_values->p, of_counts->p) << test_name(test);
    }
    // Without ties the small samples take the exact distribution, from counts too.
    EXPECT_EQ(mann_whitney_u(Distribution(k_fast), Distribution(k_slow))->p,
              mann_whitney_u(k_fast, k_slow)->p);
    EXPECT_FALSE(welch_t_test(Distribution({1.0}), db)) << "one value has no variance";
    EXPECT_FALSE(mann_whitney_u(Distribution(), db));
}

TEST(BenjaminiHochberg, MatchesR) {
    // p.adjust(c(0.01, 0.04, 0.03, 0.005, 0.5), "BH") in R.
    auto q = benjamini_hochberg({0.01, 0.04, 0.03, 0.005, 0.5});
    std::vector<double> want{0.025, 0.05, 0.05, 0.025, 0.5};
    ASSERT_EQ(q.size(), want.size());
    for (size_t i = 0; i < q.size(); ++i)
        EXPECT_NEAR(q[i], want[i], 1e-12) << i;
    // Never above 1, and nothing in, nothing out.
    EXPECT_DOUBLE_EQ(benjamini_hochberg({0.9, 0.95})[0], 0.95);
    EXPECT_TRUE(benjamini_hochberg({}).empty());
}
