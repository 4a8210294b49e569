// SPDX-License-Identifier: MIT
// Robust summaries of repeated measurements: TCG timings are noisy, so every duration
// is reported with its n, median and spread, never as one number.
#pragma once

#include <cstddef>
#include <vector>

namespace rig::core {

struct Summary {
    size_t n = 0;
    double median = 0;
    double q1 = 0; // first quartile
    double q3 = 0; // third quartile
    double mean = 0;
    double stddev = 0; // sample standard deviation (n - 1); 0 for n < 2
    double min = 0;
    double max = 0;
};

// Quartiles by linear interpolation between order statistics (R's type 7).
Summary summarize(std::vector<double> values);
double quantile(const std::vector<double>& sorted, double p);

} // namespace rig::core
