// SPDX-License-Identifier: MIT
// Baseline twins and their comparisons.
#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace rig::report {

namespace {

// Everything that identifies a cell except the baseline's key (and the cell id, which
// changes with any key). The config label follows the kernel; only a config axis counts.
std::string identity(const CellResult& result, const std::string& key) {
    std::string out;
    auto add = [&](const std::string& name, const std::string& value) {
        if (name != key)
            out += name + "=" + value + "\n";
    };
    add("run", std::to_string(result.run_id));
    add("kernel", result.cell.kernel_name);
    for (const auto& [axis, value] : result.cell.params)
        add(axis, value);
    return out;
}

// What a cell contributes to a comparison: the duration's or a metric's sorted values and
// their summary. Nothing when the cell has no such values.
struct Compared {
    const core::Distribution* values = nullptr;
    const core::Summary* summary = nullptr;
};

Compared compared_of(const CellResult& result, const std::string& metric) {
    if (metric.empty())
        return result.durations.empty() ? Compared{}
                                        : Compared{&result.durations, &result.duration};
    const MetricValues* values = find_metric(result, metric);
    return values ? Compared{&values->values, &values->summary} : Compared{};
}

} // namespace

double change_percent(double mine, double theirs) {
    if (theirs != 0)
        return (mine - theirs) / std::fabs(theirs) * 100;
    return mine == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), mine);
}

Expected<Baseline> parse_baseline(const std::string& text) {
    auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
        return fail(ErrorKind::usage,
                    "--baseline wants KEY=VALUE, for example kernel=deb-6.1; got '" + text + "'");
    return Baseline{text.substr(0, equals), text.substr(equals + 1)};
}

Expected<std::vector<Comparison>> compare(const ReportData& data, const Baseline& baseline,
                                          core::Test test, double alpha,
                                          const std::string& metric) {
    auto keys = known_keys(data.cells);
    if (baseline.key == "cell" || std::find(keys.begin(), keys.end(), baseline.key) == keys.end())
        return fail(ErrorKind::usage, "--baseline " + baseline.key + "=" + baseline.value +
                                          ": cells cannot be paired by '" + baseline.key + "'");
    std::map<std::string, size_t> base_of;
    for (size_t i = 0; i < data.cells.size(); ++i)
        if (key_value(data.cells[i], baseline.key) == baseline.value)
            base_of.emplace(identity(data.cells[i], baseline.key), i);
    if (base_of.empty())
        return fail(ErrorKind::usage, "--baseline " + baseline.key + "=" + baseline.value +
                                          ": no selected cell has " + baseline.key + " " +
                                          baseline.value);

    std::vector<Comparison> out(data.cells.size());
    for (size_t i = 0; i < data.cells.size(); ++i) {
        const CellResult& cell = data.cells[i];
        Comparison& comparison = out[i];
        if (key_value(cell, baseline.key) == baseline.value) {
            comparison.role = Role::baseline;
            continue;
        }
        auto twin = base_of.find(identity(cell, baseline.key));
        if (twin == base_of.end())
            continue;
        comparison.twin = twin->second;
        const Compared mine = compared_of(cell, metric);
        const Compared theirs = compared_of(data.cells[twin->second], metric);
        if (!mine.values || !theirs.values)
            continue; // nothing measured: no twin to speak of
        comparison.role = Role::compared;
        const bool by_mean = test == core::Test::welch;
        comparison.change_percent =
            change_percent(by_mean ? mine.summary->mean : mine.summary->median,
                           by_mean ? theirs.summary->mean : theirs.summary->median);
        comparison.gain_percent = -comparison.change_percent;
        if (mine.values->without_spread() && theirs.values->without_spread()) {
            const bool same = mine.values->min() == theirs.values->min();
            comparison.decision = same ? Decision::identical : Decision::exactly_different;
            comparison.significant = !same;
            continue;
        }
        comparison.test = run_test(test, *mine.values, *theirs.values);
        comparison.decision = comparison.test ? Decision::tested : Decision::too_few;
        comparison.significant = comparison.test && comparison.test->p < alpha;
    }
    return out;
}

} // namespace rig::report
