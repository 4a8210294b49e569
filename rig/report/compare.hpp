// SPDX-License-Identifier: MIT
// Each cell against its baseline twin: the cell that differs from it only in the
// baseline's key (kernel=deb-6.1: same run, fs, msize, cache; the other kernel).
#pragma once

#include "core/significance.hpp"
#include "report/data.hpp"
#include "util/error.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rig::report {

struct Baseline {
    std::string key;
    std::string value;
};

// Parses "key=value".
Expected<Baseline> parse_baseline(const std::string& text);

// no_twin also when a side has no value of what is compared: no twin to speak of.
enum class Role { baseline, compared, no_twin };

// How a cell and its twin were told apart. Counters are often exactly equal across
// repeats: with no spread on either side there is nothing to test, and the answer is exact.
enum class Decision {
    tested,            // by the significance test: significant when test->p < alpha
    too_few,           // a side has too few samples to test
    identical,         // every sample on both sides has the same value
    exactly_different, // each side has one value in every sample, and they differ
};

struct Comparison {
    Role role = Role::no_twin;
    size_t twin = 0; // index of the baseline cell when compared
    // Duration is better lower, so the gain is (base - cell) / base, as mmtests prints it:
    // positive means faster. change is the plain (cell - base) / base; with a base of 0 it
    // is infinite unless the cell is 0 too.
    double gain_percent = 0;
    double change_percent = 0;
    Decision decision = Decision::too_few;
    std::optional<core::TestResult> test; // set when decision is tested
    bool significant = false;             // test->p < alpha, or exactly different
};

// (mine - theirs) / |theirs| in percent; infinite from 0 unless mine is 0 too.
double change_percent(double mine, double theirs);

// One comparison per cell, in cell order, of the duration, or of the metric `metric` when
// it is not "" (a cell without it has no comparison). The statistic compared is the mean
// for Welch's test and the median for Mann-Whitney, so that the percentage matches what
// was tested. An unknown key or a value no cell has is a usage error.
Expected<std::vector<Comparison>> compare(const ReportData& data, const Baseline& baseline,
                                          core::Test test, double alpha, const std::string& metric);

} // namespace rig::report
