// SPDX-License-Identifier: MIT
// Robust summaries of repeated measurements: TCG timings are noisy, so every duration
// is reported with its n, median and spread, never as one number.
#pragma once

#include <cstddef>
#include <utility>
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

// Repeated measurements as each distinct value and how often it occurs, in ascending
// order: what a results database keeps per cell, so that a million samples whose counter
// is the same in each take one entry, and every statistic stays exact.
class Distribution {
public:
    struct Entry {
        double value = 0;
        size_t count = 0;

        bool operator==(const Entry&) const = default;
    };

    Distribution() = default;
    explicit Distribution(const std::vector<double>& values); // in any order

    // Cheap when values arrive in ascending order, as a database reads them.
    void add(double value, size_t count = 1);

    size_t size() const { return m_size; } // values, counted with their repeats
    bool empty() const { return m_size == 0; }
    const std::vector<Entry>& entries() const { return m_entries; }
    double min() const { return m_entries.front().value; } // not when empty
    double max() const { return m_entries.back().value; }
    // The value at this place of the values in ascending order, repeats counted.
    double at(size_t index) const;
    // At least two values, all equal: an exact count, which needs no test (identical runs
    // have moved varying counts by 6 %).
    bool without_spread() const { return m_size >= 2 && m_entries.size() == 1; }

    bool operator==(const Distribution&) const = default;

private:
    std::vector<Entry> m_entries;
    size_t m_size = 0;
};

// Quartiles by linear interpolation between order statistics (R's type 7). Both forms
// give the same figures for the same values, to the last bit: sums run in ascending order.
Summary summarize(const std::vector<double>& values);
Summary summarize(const Distribution& values);
double quantile(const std::vector<double>& sorted, double p);

} // namespace rig::core
