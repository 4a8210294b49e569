// SPDX-License-Identifier: MIT
// Summaries of repeated measurements.
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>

namespace rig::core {

Distribution::Distribution(const std::vector<double>& values) {
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    for (double value : sorted)
        add(value);
}

void Distribution::add(double value, size_t count) {
    if (count == 0)
        return;
    m_size += count;
    if (m_entries.empty() || m_entries.back().value < value) {
        m_entries.push_back({value, count});
        return;
    }
    auto at = std::lower_bound(m_entries.begin(), m_entries.end(), value,
                               [](const Entry& entry, double v) { return entry.value < v; });
    if (at != m_entries.end() && at->value == value)
        at->count += count;
    else
        m_entries.insert(at, Entry{value, count});
}

double Distribution::at(size_t index) const {
    for (const Entry& entry : m_entries) {
        if (index < entry.count)
            return entry.value;
        index -= entry.count;
    }
    return m_entries.back().value;
}

namespace {

// R's type 7 over any sorted sequence that answers "the value at index i".
template <class At> double interpolate(size_t size, double p, At at) {
    if (size == 0)
        return 0;
    double position = p * static_cast<double>(size - 1);
    size_t below = static_cast<size_t>(std::floor(position));
    size_t above = std::min(below + 1, size - 1);
    double weight = position - static_cast<double>(below);
    double low = at(below);
    return low + weight * (at(above) - low);
}

} // namespace

double quantile(const std::vector<double>& sorted, double p) {
    return interpolate(sorted.size(), p, [&](size_t i) { return sorted[i]; });
}

Summary summarize(const std::vector<double>& values) {
    return summarize(Distribution(values));
}

Summary summarize(const Distribution& values) {
    Summary summary;
    summary.n = values.size();
    if (values.empty())
        return summary;
    auto at = [&](size_t i) { return values.at(i); };
    summary.median = interpolate(values.size(), 0.5, at);
    summary.q1 = interpolate(values.size(), 0.25, at);
    summary.q3 = interpolate(values.size(), 0.75, at);
    summary.min = values.min();
    summary.max = values.max();
    // One addition per value, repeats included, in ascending order: a product of value
    // and count would round differently from the sum the values themselves give.
    double sum = 0;
    for (const auto& entry : values.entries())
        for (size_t i = 0; i < entry.count; ++i)
            sum += entry.value;
    summary.mean = sum / static_cast<double>(values.size());
    if (values.size() > 1) {
        double squares = 0;
        for (const auto& entry : values.entries())
            for (size_t i = 0; i < entry.count; ++i)
                squares += (entry.value - summary.mean) * (entry.value - summary.mean);
        summary.stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
    }
    return summary;
}

} // namespace rig::core
