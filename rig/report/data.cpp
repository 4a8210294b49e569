// SPDX-License-Identifier: MIT
// Cell results from samples, and the keys reports select and pivot by.
#include "report/data.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace rig::report {

namespace {

// Lines of log shown before and after the first occurrence of a signature.
constexpr size_t k_lines_before = 2;
constexpr size_t k_lines_after = 3;

} // namespace

void note_why(CellResult& result, const core::Sample& sample) {
    if (core::why_not_ok(sample).empty() || result.why.size() >= 3)
        return;
    std::string why = core::outcome_text(sample);
    if (std::find(result.why.begin(), result.why.end(), why) == result.why.end())
        result.why.push_back(std::move(why));
}

void tally_sample(CellResult& result, const core::Sample& sample) {
    ++result.samples;
    ++result.outcomes[std::string(core::to_string(sample.outcome))];
    const bool timed = core::measured(sample.outcome);
    if (timed && sample.guest_seconds > 0)
        result.durations.push_back(sample.guest_seconds);
    if (timed && sample.wall_seconds > 0)
        result.cpu_percent.push_back(sample.host_cpu_percent);
    // A failed workload stopped part way: its counts would mix with whole ones.
    if (timed)
        for (const core::Metric& metric : sample.metrics) {
            auto it = result.metrics.find(metric.name);
            if (it == result.metrics.end())
                it = result.metrics.emplace(metric.name, MetricValues{metric.unit, {}, {}}).first;
            it->second.values.push_back(metric.value);
        }
    note_why(result, sample);
    result.errors += sample.error_count;
    result.warnings += sample.warning_count;
    result.samples_with_errors += sample.error_count > 0;
    auto requested = result.cell.msize();
    if (sample.msize_negotiated && requested && *sample.msize_negotiated != *requested &&
        !result.msize_negotiated)
        result.msize_negotiated = sample.msize_negotiated;
    const std::string cache = result.cell.cache();
    if (!cache.empty() && !sample.cache_negotiated.empty() && sample.cache_negotiated != cache &&
        result.cache_negotiated.empty())
        result.cache_negotiated = sample.cache_negotiated;
}

void finish(CellResult& result) {
    // Sorted, so that every statistic is the same whatever order the store returned the
    // samples in: floating-point sums depend on the order of their terms.
    std::sort(result.durations.begin(), result.durations.end());
    std::sort(result.cpu_percent.begin(), result.cpu_percent.end());
    result.duration = core::summarize(result.durations);
    result.cpu = core::summarize(result.cpu_percent);
    for (auto& [name, metric] : result.metrics) {
        std::sort(metric.values.begin(), metric.values.end());
        metric.summary = core::summarize(metric.values);
    }
}

const MetricValues* find_metric(const CellResult& result, std::string_view name) {
    auto it = result.metrics.find(name);
    return it == result.metrics.end() ? nullptr : &it->second;
}

ReportData from_samples(const std::vector<core::Cell>& cells,
                        const std::vector<core::Sample>& samples) {
    ReportData data;
    std::map<std::string, size_t> index_of;
    for (const core::Cell& cell : cells) {
        index_of[cell.id] = data.cells.size();
        data.cells.emplace_back().cell = cell;
    }
    for (const core::Sample& sample : samples) {
        auto it = index_of.find(sample.cell_id);
        if (it == index_of.end())
            continue;
        tally_sample(data.cells[it->second], sample);
    }
    for (CellResult& result : data.cells)
        finish(result);
    return data;
}

std::string key_value(const CellResult& result, const std::string& key) {
    if (key == "run")
        return std::to_string(result.run_id);
    if (key == "cell")
        return result.cell.id;
    if (key == "kernel")
        return result.cell.kernel_name;
    if (key == "config")
        return result.cell.config;
    return result.cell.param(key);
}

std::vector<std::string> known_keys(const std::vector<CellResult>& cells) {
    std::vector<std::string> keys{"run", "cell", "kernel", "config"};
    std::set<std::string> axes;
    for (const CellResult& result : cells)
        for (const auto& [axis, value] : result.cell.params)
            axes.insert(axis);
    for (const auto& axis : axes)
        if (std::find(keys.begin(), keys.end(), axis) == keys.end())
            keys.push_back(axis);
    return keys;
}

std::string excerpt_around(const std::string& log, const std::string& line) {
    if (line.empty())
        return {};
    std::vector<std::string> lines;
    std::istringstream in(log);
    for (std::string text; std::getline(in, text);)
        lines.push_back(text);
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].find(line) == std::string::npos)
            continue;
        size_t first = i >= k_lines_before ? i - k_lines_before : 0;
        size_t last = std::min(lines.size(), i + k_lines_after + 1);
        std::string out;
        for (size_t k = first; k < last; ++k)
            out += (k == i ? "> " : "  ") + lines[k] + "\n";
        return out;
    }
    return {};
}

} // namespace rig::report
