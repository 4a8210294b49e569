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

// The values of each axis that applies to `kernel` under `fs_value`, in axis_defs()
// order, fs itself left out: the factors of that part of the plan's product.
std::vector<std::pair<std::string, const std::vector<Located>*>>
applicable_axes(const Scenario& scenario, const Plan& plan, size_t kernel,
                const Located& fs_value) {
    const Filesystem* found = find_fs(fs_value.value);
    const Filesystem& fs = found ? *found : default_fs();
    std::vector<std::pair<std::string, const std::vector<Located>*>> out;
    for (const AxisDef& axis : axis_defs()) {
        if (axis.name == "fs" || !applies(axis, scenario.kernels[kernel], fs))
            continue;
        if (axis.name == "cache" && !plan.cache_by_fs.empty()) {
            // Per-fs form: an fs without an entry keeps its default cache mode.
            auto it = plan.cache_by_fs.find(fs_value.value);
            if (it != plan.cache_by_fs.end())
                out.emplace_back(axis.name, &it->second);
            continue;
        }
        if (auto it = plan.axes.find(std::string(axis.name)); it != plan.axes.end())
            out.emplace_back(axis.name, &it->second);
    }
    return out;
}

const std::vector<Located>& fs_values_of(const Plan& plan) {
    static const std::vector<Located> k_default_fs_values{
        {std::string(k_default_fs), {}, "matrix.fs"}};
    auto fs_it = plan.axes.find("fs");
    return fs_it == plan.axes.end() ? k_default_fs_values : fs_it->second;
}

// Cells the plan yields before exclusions, at most `cap` + 1.
uint64_t count_plan(const Scenario& scenario, const Plan& plan, uint64_t cap) {
    uint64_t total = 0;
    for (size_t kernel : plan.kernels) {
        for (const Located& fs_value : fs_values_of(plan)) {
            uint64_t cells = 1;
            for (const auto& [name, values] : applicable_axes(scenario, plan, kernel, fs_value))
                cells = std::min(cells * std::max<size_t>(1, values->size()), cap + 1);
            total = std::min(total + cells, cap + 1);
        }
    }
    return total;
}

// Cartesian product over the axes that apply, in axis_defs() order.
Expected<void> expand_plan(const Scenario& scenario, const Plan& plan, std::vector<Cell>& out,
                           const std::vector<Rule>& exclude, size_t& excluded) {
    for (size_t kernel : plan.kernels) {
        for (const Located& fs_value : fs_values_of(plan)) {
            const Filesystem* found = find_fs(fs_value.value);
            const Filesystem& fs = found ? *found : default_fs();
            std::vector<Params> partial{{{"fs", fs_value.value}}};
            // Cache checks need the Located value, so remember it per partial cell.
            std::vector<const Located*> cache_origin{nullptr};
            for (const auto& [name, values] : applicable_axes(scenario, plan, kernel, fs_value)) {
                std::vector<Params> grown;
                std::vector<const Located*> grown_origin;
                for (size_t i = 0; i < partial.size(); ++i) {
                    for (const Located& value : *values) {
                        Params params = partial[i];
                        params[name] = value.value;
                        grown.push_back(std::move(params));
                        grown_origin.push_back(name == "cache" ? &value : cache_origin[i]);
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

uint64_t count_cells(const Scenario& scenario, uint64_t cap) {
    uint64_t total = count_plan(scenario, main_plan(scenario), cap);
    for (const Rule& rule : scenario.include)
        total = std::min(total + count_plan(scenario, include_plan(scenario, rule), cap), cap + 1);
    return total;
}

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
