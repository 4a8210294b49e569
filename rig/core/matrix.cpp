// SPDX-License-Identifier: MIT
// Matrix expansion.
#include "core/matrix.hpp"

#include "core/axis.hpp"
#include "core/diagnostic.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <set>

namespace rig::core {

namespace {

using Params = std::map<std::string, std::string>;

// The values each axis takes for one (sub-)matrix, keyed by axis name.
struct Plan {
    std::map<std::string, std::vector<Located>> axes;
    std::map<std::string, std::vector<Located>> cache_by_fs;
    std::vector<size_t> kernels;
};

bool rule_matches(const Rule& rule, const Scenario& scenario, size_t kernel, const Params& params) {
    for (const auto& [key, accepted] : rule.match) {
        std::string actual;
        if (key == "kernel") {
            actual = scenario.kernels[kernel].name;
        } else {
            auto it = params.find(key);
            if (it == params.end())
                return false; // the axis does not apply to this cell
            actual = it->second;
        }
        auto same = [&](const Located& value) { return value.value == actual; };
        if (std::none_of(accepted.begin(), accepted.end(), same))
            return false;
    }
    return true;
}

// Cartesian product over the axes that apply, in axis_defs() order.
Expected<void> expand_plan(const Scenario& scenario, const Plan& plan, std::vector<Cell>& out,
                           const std::vector<Rule>& exclude, size_t& excluded) {
    static const std::vector<Located> k_default_fs_values{
        {std::string(k_default_fs), {}, "matrix.fs"}};
    for (size_t kernel : plan.kernels) {
        auto fs_it = plan.axes.find("fs");
        const auto& fs_values = fs_it == plan.axes.end() ? k_default_fs_values : fs_it->second;
        for (const Located& fs_value : fs_values) {
            const Filesystem* found = find_fs(fs_value.value);
            const Filesystem& fs = found ? *found : default_fs();
            std::vector<Params> partial{{{"fs", fs_value.value}}};
            // Cache checks need the Located value, so remember it per partial cell.
            std::vector<const Located*> cache_origin{nullptr};
            for (const AxisDef& axis : axis_defs()) {
                if (axis.name == "fs" || !applies(axis, scenario.kernels[kernel], fs))
                    continue;
                const std::vector<Located>* values = nullptr;
                if (axis.name == "cache" && !plan.cache_by_fs.empty()) {
                    // Per-fs form: an fs without an entry keeps its default cache mode.
                    auto it = plan.cache_by_fs.find(fs_value.value);
                    if (it == plan.cache_by_fs.end())
                        continue;
                    values = &it->second;
                }
                if (!values) {
                    auto it = plan.axes.find(std::string(axis.name));
                    if (it == plan.axes.end())
                        continue;
                    values = &it->second;
                }
                std::vector<Params> grown;
                std::vector<const Located*> grown_origin;
                for (size_t i = 0; i < partial.size(); ++i) {
                    for (const Located& value : *values) {
                        Params params = partial[i];
                        params[std::string(axis.name)] = value.value;
                        grown.push_back(std::move(params));
                        grown_origin.push_back(axis.name == "cache" ? &value : cache_origin[i]);
                    }
                }
                partial = std::move(grown);
                cache_origin = std::move(grown_origin);
            }
            for (size_t i = 0; i < partial.size(); ++i) {
                const Params& params = partial[i];
                bool dropped = std::any_of(exclude.begin(), exclude.end(), [&](const Rule& rule) {
                    return rule_matches(rule, scenario, kernel, params);
                });
                if (dropped) {
                    ++excluded;
                    continue;
                }
                if (auto it = params.find("cache");
                    it != params.end() && !is_valid_cache(fs, it->second)) {
                    const Located* origin = cache_origin[i];
                    return config_error(scenario.file, origin ? origin->loc : Loc{},
                                        origin ? origin->path : "matrix.cache",
                                        "cache mode '" + it->second + "' is not valid for fs " +
                                            fs_value.value +
                                            " (valid: " + util::join(valid_caches(fs), ", ") +
                                            "); exclude the pair or give cache per fs");
                }
                out.push_back(make_cell(scenario, kernel, params));
            }
        }
    }
    return {};
}

Plan main_plan(const Scenario& scenario) {
    Plan plan;
    for (const AxisValues& axis : scenario.matrix) {
        plan.axes[axis.name] = axis.values;
        if (axis.name == "cache")
            plan.cache_by_fs = axis.by_fs;
    }
    for (size_t k = 0; k < scenario.kernels.size(); ++k)
        plan.kernels.push_back(k);
    return plan;
}

// An include rule is a sub-matrix: the axes it names replace the main matrix's values.
Plan include_plan(const Scenario& scenario, const Rule& rule) {
    Plan plan = main_plan(scenario);
    for (const auto& [key, values] : rule.match) {
        if (key == "kernel") {
            plan.kernels.clear();
            for (size_t k = 0; k < scenario.kernels.size(); ++k)
                for (const Located& value : values)
                    if (scenario.kernels[k].name == value.value)
                        plan.kernels.push_back(k);
        } else {
            plan.axes[key] = values;
            if (key == "cache")
                plan.cache_by_fs.clear();
        }
    }
    return plan;
}

} // namespace

Expected<std::vector<Cell>> expand(const Scenario& scenario) {
    std::vector<Cell> cells;
    size_t excluded = 0;
    RIG_TRY(expand_plan(scenario, main_plan(scenario), cells, scenario.exclude, excluded));

    for (const Rule& rule : scenario.include) {
        // Exclusions shape the main matrix only; an include is an explicit request.
        size_t ignored = 0;
        RIG_TRY(expand_plan(scenario, include_plan(scenario, rule), cells, {}, ignored));
    }

    // Includes may repeat cells of the main matrix; the first occurrence wins.
    std::set<std::string> seen;
    std::erase_if(cells, [&](const Cell& cell) { return !seen.insert(cell.id).second; });

    if (cells.empty()) {
        std::string why = excluded > 0 ? "the matrix is empty after exclusions (all " +
                                             std::to_string(excluded) + " cells excluded)"
                                       : "the matrix has no cells";
        return config_error(scenario.file, scenario.matrix_loc, "matrix", why);
    }
    return cells;
}

} // namespace rig::core
