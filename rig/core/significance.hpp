// SPDX-License-Identifier: MIT
// Two-sample significance tests, for a report's baseline comparison and a bisect's verdicts:
// Welch's t-test
// and the Mann-Whitney U test, with p-values from Boost.Math's distributions.
#pragma once

#include "core/stats.hpp"

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace rig::core {

enum class Test { welch, mann_whitney };
// "Welch's t-test", "Mann-Whitney U".
std::string_view test_name(Test test);

struct TestResult {
    double statistic = 0; // t for Welch, U of the first sample for Mann-Whitney
    double df = 0;        // Welch-Satterthwaite degrees of freedom; 0 for Mann-Whitney
    double p = 1;         // two-sided
};

// Welch's unequal-variances t-test, two-sided, as scipy.stats.ttest_ind(a, b,
// equal_var=False) and R's t.test(a, b). Nothing when a sample has fewer than two values
// or both have no spread (the statistic is undefined).
std::optional<TestResult> welch_t_test(const std::vector<double>& a, const std::vector<double>& b);
std::optional<TestResult> welch_t_test(const Distribution& a, const Distribution& b);

// Two-sided Mann-Whitney U, as scipy.stats.mannwhitneyu(a, b) with method="auto": the
// exact distribution when a sample has fewer than 8 values and there are no ties, else
// the normal approximation with tie correction and continuity correction. Nothing when a
// sample is empty or every value is tied.
std::optional<TestResult> mann_whitney_u(const std::vector<double>& a,
                                         const std::vector<double>& b);
std::optional<TestResult> mann_whitney_u(const Distribution& a, const Distribution& b);

std::optional<TestResult> run_test(Test test, const std::vector<double>& a,
                                   const std::vector<double>& b);
std::optional<TestResult> run_test(Test test, const Distribution& a, const Distribution& b);

// Rates of an event, such as a failure family seen in some of a commit's samples.
// Fisher's exact test, one-sided: the probability of `a` or more events in the first
// group's `n_a` trials when `a + b` events fell over all `n_a + n_b` trials at random
// (the hypergeometric tail). Small: the first group's rate is higher than the second's.
double fisher_greater(int a, int n_a, int b, int n_b);

// The one-sided lower confidence bound of a rate seen `successes` times in `trials`
// (Clopper-Pearson): the true rate is at least this with probability `level`. 0 for no
// successes.
double rate_lower_bound(int successes, int trials, double level);

// Benjamini-Hochberg adjusted p-values (q-values), in the order of `p`, as R's
// p.adjust(p, "BH"): calling a change when its q is below a level keeps the expected share
// of chance findings among those called below that level, however many are tested.
std::vector<double> benjamini_hochberg(const std::vector<double>& p);

// The 95% confidence interval of the mean, from Student's t; nothing for n < 2.
std::optional<std::pair<double, double>> mean_ci(const Summary& summary);

} // namespace rig::core
