// SPDX-License-Identifier: MIT
// Each cell against its baseline twin: the cell that differs from it only in the
// baseline's key (kernel=deb-6.1: same run, fs, msize, cache; the other kernel).
#pragma once

#include "report/data.hpp"
#include "report/significance.hpp"
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

enum class Role { baseline, compared, no_twin };

struct Comparison {
    Role role = Role::no_twin;
    size_t twin = 0; // index of the baseline cell when compared
    // Duration is better lower, so the gain is (base - cell) / base, as mmtests prints it:
    // positive means faster. change is the plain (cell - base) / base.
    double gain_percent = 0;
    double change_percent = 0;
    std::optional<TestResult> test; // nothing when a side has too few samples
    bool significant = false;       // test->p < alpha
};

// One comparison per cell, in cell order. The statistic compared is the mean for Welch's
// test and the median for Mann-Whitney, so that the percentage matches what was tested.
// An unknown key or a value no cell has is a usage error.
Expected<std::vector<Comparison>> compare(const ReportData& data, const Baseline& baseline,
                                          Test test, double alpha);

} // namespace rig::report
