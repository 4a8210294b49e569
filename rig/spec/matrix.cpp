// SPDX-License-Identifier: MIT
// The matrix and its rules read into core types, and the checks of the matrix as a whole.
#include "spec/matrix.hpp"

#include "core/axis.hpp"
#include "core/diagnostic.hpp"
#include "core/fs.hpp"
#include "core/matrix.hpp"
#include "spec/keys.hpp"
#include "spec/reader_context.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <map>

namespace rig::spec {

using core::Located;

namespace {

// The largest matrix one scenario may declare. Each cell costs minutes per sample, so a
// matrix beyond this is a typo or a job for several scenarios; the bound also keeps a
// hostile file from making expansion itself slow.
constexpr uint64_t k_max_cells = 10000;

// "; its caching is set by A, B and C": the axes of a filesystem without cache modes.
std::string set_by(const core::Filesystem& fs) {
    std::vector<std::string> axes(fs.axes.begin(), fs.axes.end());
    if (axes.empty())
        return "";
    std::string last = axes.back();
    axes.pop_back();
    return "; its caching is set by " + (axes.empty() ? "" : util::join(axes, ", ") + " and ") +
           last;
}

Expected<core::AxisValues> read_cache_by_fs(const Context& context, const Entry& entry) {
    core::AxisValues axis{entry.key, {}, {}, loc_of(entry.value)};
    std::vector<Entry> per_fs =
        RIG_TRY(read_map(context, entry.value, entry.path, &core::fs_names()));
    if (per_fs.empty())
        return error_at(context, entry.value, entry.path,
                        "empty map; give cache modes per fs, e.g. {9p: [none, loose]}");
    for (const Entry& fs_entry : per_fs) {
        const core::Filesystem& fs = *core::find_fs(fs_entry.key);
        if (!core::has_cache_axis(fs))
            return error_at(context, fs_entry.key_node, fs_entry.path,
                            "fs " + fs_entry.key + " has no cache modes" + set_by(fs));
        std::vector<Located> values =
            RIG_TRY(read_scalars(context, fs_entry.value, fs_entry.path, Shape::scalar_or_list));
        for (const Located& value : values)
            if (!core::is_valid_cache(fs, value.value))
                return error_at(context, value,
                                "cache mode '" + value.value + "' is not valid for fs " +
                                    fs_entry.key +
                                    " (valid: " + util::join(core::valid_caches(fs), ", ") + ")");
        std::vector<std::string> written;
        for (const Located& value : values)
            written.push_back(value.value);
        RIG_TRY(check_unique(context, values, written));
        axis.by_fs[fs_entry.key] = std::move(values);
    }
    return axis;
}

} // namespace

Expected<std::vector<core::AxisValues>> read_matrix(const Context& context, const Entry& entry) {
    static const std::vector<std::string> k_axes = core::axis_names();
    std::vector<core::AxisValues> matrix;
    for (const Entry& axis_entry : RIG_TRY(read_map(context, entry.value, entry.path, &k_axes))) {
        if (axis_entry.key == "cache" && axis_entry.value.IsMap()) {
            matrix.push_back(RIG_TRY(read_cache_by_fs(context, axis_entry)));
            continue;
        }
        core::AxisValues axis{axis_entry.key, {}, {}, loc_of(axis_entry.value)};
        axis.values =
            RIG_TRY(read_axis_values(context, axis_entry.key, axis_entry.value, axis_entry.path));
        matrix.push_back(std::move(axis));
    }
    return matrix;
}

Expected<std::vector<core::Rule>> read_rules(const Context& context, const Entry& entry,
                                             const std::vector<core::Kernel>& kernels) {
    std::vector<std::string> kernel_names;
    for (const core::Kernel& kernel : kernels)
        kernel_names.push_back(kernel.name);

    std::vector<core::Rule> rules;
    for (const Item& item : RIG_TRY(read_list(context, entry.value, entry.path))) {
        core::Rule rule;
        rule.loc = loc_of(item.node);
        rule.path = item.path;
        std::vector<Entry> keys = RIG_TRY(read_map(context, item.node, item.path, &rule_keys()));
        if (keys.empty())
            return error_at(context, item.node, item.path,
                            "empty rule; name at least one axis or 'kernel'");
        for (const Entry& key : keys) {
            if (key.key != "kernel") {
                rule.match[key.key] =
                    RIG_TRY(read_axis_values(context, key.key, key.value, key.path));
                continue;
            }
            std::vector<Located> names =
                RIG_TRY(read_scalars(context, key.value, key.path, Shape::scalar_or_list));
            for (const Located& name : names)
                if (!contains(kernel_names, name.value))
                    return error_at(context, name, unknown("kernel", name.value, kernel_names));
            rule.match[key.key] = std::move(names);
        }
        rules.push_back(std::move(rule));
    }
    return rules;
}

// With cache given per fs, core::expand falls back to the (empty) list form for an fs
// that has no entry, which would drop its cells without a word; say so instead.
Expected<void> check_cache_covers_fs(const Context& context, const core::Scenario& scenario) {
    const core::AxisValues* cache = nullptr;
    std::vector<Located> fs_values{{std::string(core::k_default_fs), {}, "matrix.fs"}};
    for (const core::AxisValues& axis : scenario.matrix) {
        if (axis.name == "cache" && !axis.by_fs.empty())
            cache = &axis;
        if (axis.name == "fs")
            fs_values = axis.values;
    }
    if (!cache)
        return {};
    auto missing = [&](const std::vector<Located>& values) -> const Located* {
        for (const Located& fs : values)
            if (core::has_cache_axis(*core::find_fs(fs.value)) && !cache->by_fs.count(fs.value))
                return &fs;
        return nullptr;
    };
    auto valid = [](const std::string& fs) {
        return util::join(core::valid_caches(*core::find_fs(fs)), ", ");
    };
    if (const Located* fs = missing(fs_values))
        return core::config_error(context.file, cache->loc, "matrix.cache",
                                  "no cache modes for fs " + fs->value + "; add '" + fs->value +
                                      ": [...]' (valid: " + valid(fs->value) + ")");
    for (const core::Rule& rule : scenario.include) {
        if (rule.match.count("cache"))
            continue;
        auto fs_it = rule.match.find("fs");
        if (const Located* fs = missing(fs_it == rule.match.end() ? fs_values : fs_it->second))
            return core::config_error(context.file, rule.loc, rule.path,
                                      "fs " + fs->value +
                                          " has no cache modes in matrix.cache; name 'cache' in "
                                          "this rule");
    }
    return {};
}

Expected<void> check_size(const Context& context, const core::Scenario& scenario) {
    // expand's own count, before it makes (and hashes) a single cell.
    uint64_t total = core::count_cells(scenario, k_max_cells);
    if (total > k_max_cells)
        return core::config_error(context.file, scenario.matrix_loc, "matrix",
                                  "more than " + std::to_string(k_max_cells) +
                                      " cells; split the matrix into several scenarios");
    return {};
}

} // namespace rig::spec
