// SPDX-License-Identifier: MIT
// Two-sample significance tests for comparing a cell with its baseline: Welch's t-test
// and the Mann-Whitney U test, with p-values from Boost.Math's distributions.
#pragma once

#include <optional>
#include <vector>

namespace rig::report {

enum class Test { welch, mann_whitney };

struct TestResult {
    double statistic = 0; // t for Welch, U of the first sample for Mann-Whitney
    double df = 0;        // Welch-Satterthwaite degrees of freedom; 0 for Mann-Whitney
    double p = 1;         // two-sided
};

// Welch's unequal-variances t-test, two-sided, as scipy.stats.ttest_ind(a, b,
// equal_var=False) and R's t.test(a, b). Nothing when a sample has fewer than two values
// or both have no spread (the statistic is undefined).
std::optional<TestResult> welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

// Two-sided Mann-Whitney U, as scipy.stats.mannwhitneyu(a, b) with method="auto": the
// exact distribution when a sample has fewer than 8 values and there are no ties, else
// the normal approximation with tie correction and continuity correction. Nothing when a
// sample is empty or every value is tied.
std::optional<TestResult> mann_whitney_u(const std::vector<double>& a,
                                         const std::vector<double>& b);

std::optional<TestResult> run_test(Test test, const std::vector<double>& a,
                                   const std::vector<double>& b);

} // namespace rig::report
