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

namespace {

// The first negotiated value that differs from the requested one.
void note_negotiated(CellResult& result, const std::optional<uint64_t>& msize,
                     const std::string& cache) {
    auto requested = result.cell.msize();
    if (msize && requested && *msize != *requested && !result.msize_negotiated)
        result.msize_negotiated = msize;
    const std::string wanted = result.cell.cache();
    if (!wanted.empty() && !cache.empty() && cache != wanted && result.cache_negotiated.empty())
        result.cache_negotiated = cache;
}

} // namespace

void tally_sample(CellResult& result, const core::Sample& sample) {
    ++result.samples;
    ++result.outcomes[std::string(core::to_string(sample.outcome))];
    for (const core::FigureValue& value : core::figure_values(sample))
        tally_figure(result, value.figure, value.name, value.unit, value.value, 1);
    note_why(result, sample);
    result.errors += sample.error_count;
    result.warnings += sample.warning_count;
    result.samples_with_errors += sample.error_count > 0;
    note_negotiated(result, sample.msize_negotiated, sample.cache_negotiated);
}

void tally_outcomes(CellResult& result, const store::OutcomeTally& tally) {
    result.samples += static_cast<size_t>(tally.samples);
    result.outcomes[std::string(core::to_string(tally.outcome))] += static_cast<int>(tally.samples);
    result.errors += static_cast<int>(tally.errors);
    result.warnings += static_cast<int>(tally.warnings);
    result.samples_with_errors += static_cast<int>(tally.with_errors);
    note_negotiated(result, tally.msize_negotiated, tally.cache_negotiated);
}

void tally_figure(CellResult& result, core::Figure figure, std::string_view name,
                  std::string_view unit, double value, size_t count) {
    switch (figure) {
    case core::Figure::duration:
        result.durations.add(value, count);
        return;
    case core::Figure::cpu:
        result.cpu_percent.add(value, count);
        return;
    case core::Figure::metric:
        break;
    }
    auto it = result.metrics.find(name);
    if (it == result.metrics.end())
        it = result.metrics.emplace(std::string(name), MetricValues{std::string(unit), {}, {}})
                 .first;
    it->second.values.add(value, count);
}

void finish(CellResult& result) {
    // A distribution is sorted, so every statistic is the same whatever order the samples
    // came in: floating-point sums depend on the order of their terms.
    result.duration = core::summarize(result.durations);
    result.cpu = core::summarize(result.cpu_percent);
    for (auto& [name, metric] : result.metrics)
        metric.summary = core::summarize(metric.values);
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
