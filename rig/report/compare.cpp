// SPDX-License-Identifier: MIT
// Baseline twins and their comparisons.
#include "report/compare.hpp"

#include <algorithm>
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

} // namespace

Expected<Baseline> parse_baseline(const std::string& text) {
    auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
        return fail(ErrorKind::usage,
                    "--baseline wants KEY=VALUE, for example kernel=deb-6.1; got '" + text + "'");
    return Baseline{text.substr(0, equals), text.substr(equals + 1)};
}

Expected<std::vector<Comparison>> compare(const ReportData& data, const Baseline& baseline,
                                          Test test, double alpha) {
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
        const CellResult& base = data.cells[twin->second];
        if (cell.durations.empty() || base.durations.empty())
            continue; // nothing measured: no twin to speak of
        comparison.role = Role::compared;
        const double mine = test == Test::welch ? cell.duration.mean : cell.duration.median;
        const double theirs = test == Test::welch ? base.duration.mean : base.duration.median;
        if (theirs > 0) {
            comparison.change_percent = (mine - theirs) / theirs * 100;
            comparison.gain_percent = -comparison.change_percent;
        }
        comparison.test = run_test(test, cell.durations, base.durations);
        comparison.significant = comparison.test && comparison.test->p < alpha;
    }
    return out;
}

} // namespace rig::report
