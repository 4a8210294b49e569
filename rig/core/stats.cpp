// SPDX-License-Identifier: MIT
// Summaries of repeated measurements.
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rig::core {

double quantile(const std::vector<double>& sorted, double p) {
    if (sorted.empty())
        return 0;
    double position = p * static_cast<double>(sorted.size() - 1);
    size_t below = static_cast<size_t>(std::floor(position));
    size_t above = std::min(below + 1, sorted.size() - 1);
    double weight = position - static_cast<double>(below);
    return sorted[below] + weight * (sorted[above] - sorted[below]);
}

Summary summarize(std::vector<double> values) {
    Summary summary;
    summary.n = values.size();
    if (values.empty())
        return summary;
    std::sort(values.begin(), values.end());
    summary.median = quantile(values, 0.5);
    summary.q1 = quantile(values, 0.25);
    summary.q3 = quantile(values, 0.75);
    summary.min = values.front();
    summary.max = values.back();
    summary.mean =
        std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    if (values.size() > 1) {
        double squares = 0;
        for (double value : values)
            squares += (value - summary.mean) * (value - summary.mean);
        summary.stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
    }
    return summary;
}

} // namespace rig::core
