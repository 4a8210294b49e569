// SPDX-License-Identifier: MIT
// Scenario YAML to core::Scenario: the schema, canonical values and located errors.
#include "spec/spec.hpp"

#include "core/axis.hpp"
#include "core/diagnostic.hpp"
#include "core/fs.hpp"
#include "core/matrix.hpp"
#include "spec/yaml_reader.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <map>
#include <unistd.h>
#include <yaml-cpp/depthguard.h>

namespace rig::spec {

namespace {

using core::Located;

const std::vector<std::string> k_top_keys{"name",     "kernels", "matrix", "exclude", "include",
                                          "workload", "repeat",  "warmup", "guest",   "timeouts",
                                          "backend",  "uri",     "hosts",  "slurm",   "jobs"};
const std::vector<std::string> k_kernel_keys{"name",    "debian",  "flavour", "image",
                                             "modules", "build",   "git",     "ref",
                                             "config",  "patches", "options"};
const std::vector<std::string> k_sources{"debian", "image", "git"};
const std::vector<std::string> k_git_only{"ref", "config", "patches", "options"};
const std::vector<std::string> k_workload_keys{"generate", "tree",   "command",
                                               "phases",   "module", "params"};
const std::vector<std::string> k_generate_keys{"units", "headers", "functions"};
const std::vector<std::string> k_guest_keys{"memory", "cpus", "accel", "count_9p", "scratch"};
const std::vector<std::string> k_timeout_keys{"boot", "workload", "silence"};
const std::vector<std::string> k_slurm_keys{"partition", "time",   "account", "constraint",
                                            "exclusive", "sbatch", "shared"};
// sbatch options rig sets itself for every job: the array, its name (how a resumed run
// finds its jobs), where output goes, and the script with its arguments.
const std::vector<std::string> k_sbatch_owned{
    "--array", "-a", "--job-name", "-J",     "--output",  "-o",           "--error",         "-e",
    "--chdir", "-D", "--parsable", "--wrap", "--requeue", "--no-requeue", "--cpus-per-task", "-c"};

const std::string k_default_generate_command = "make -j2";

// The largest matrix one scenario may declare. Each cell costs minutes per sample, so a
// matrix beyond this is a typo or a job for several scenarios; the bound also keeps a
// hostile file from making expansion itself slow.
constexpr uint64_t k_max_cells = 10000;

// The kernel keeps msize in an unsigned int.
constexpr uint64_t k_max_msize = std::numeric_limits<uint32_t>::max();

// Below this a guest kernel plus the build workload does not fit.
constexpr uint64_t k_min_memory_mib = 128;

// The scratch disk is a sparse file made per sample: whole MiB keep it a whole number of
// sectors, and the bound keeps a typo (a bare number is bytes; 256T) off the host's disk.
constexpr uint64_t k_max_scratch_mib = 1ULL << 20; // 1 TiB

tl::unexpected<Error> error_at(const Context& context, const Located& value,
                               std::string_view message) {
    return core::config_error(context.file, value.loc, value.path, message);
}

// "unknown fs 'zfs'; did you mean ...?" or, with no close candidate, the valid list.
std::string unknown(std::string_view what, std::string_view word,
                    const std::vector<std::string>& candidates) {
    std::string message = "unknown " + std::string(what) + " '" + std::string(word) + "'";
    if (std::string guess = util::closest_match(word, candidates); !guess.empty())
        return message + "; did you mean '" + guess + "'?";
    return message + " (valid: " + util::join(candidates, ", ") + ")";
}

bool contains(const std::vector<std::string>& list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

std::vector<std::string> all_caches() {
    std::vector<std::string> caches;
    for (const core::Filesystem* fs : core::filesystems())
        for (const std::string& cache : core::valid_caches(*fs))
            if (!contains(caches, cache))
                caches.push_back(cache);
    return caches;
}

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

bool is_fragment_name(std::string_view name) {
    return is_word(name, "_-", false);
}

// Turns an axis value as written into its canonical text: the text cell ids are made of.
Expected<Located> canonical_axis_value(const Context& context, std::string_view axis,
                                       Located value) {
    if (axis == "fs") {
        if (!core::find_fs(value.value))
            return error_at(context, value, unknown("fs", value.value, core::fs_names()));
    } else if (axis == "msize") {
        auto bytes = util::parse_size(value.value);
        if (!bytes)
            return error_at(context, value,
                            "expected a size in bytes such as 8192 or 512K, got '" + value.value +
                                "'");
        if (*bytes < core::k_min_msize)
            return error_at(context, value,
                            "msize must be at least " + std::to_string(core::k_min_msize) +
                                " bytes (a 9p header plus payload), got " + value.value);
        if (*bytes > k_max_msize)
            return error_at(context, value,
                            "msize must be at most " + std::to_string(k_max_msize) +
                                " bytes (the kernel keeps it in 32 bits), got " + value.value);
        value.value = std::to_string(*bytes);
    } else if (axis == "cache") {
        // Whether the mode suits the cell's fs is core::expand's call; a word no fs knows
        // is a typo we can name here with a suggestion.
        if (!contains(all_caches(), value.value))
            return error_at(context, value, unknown("cache mode", value.value, all_caches()));
    } else if (const core::AxisDef* def = core::find_axis(axis);
               def && def->kind == core::AxisKind::seconds) {
        auto seconds = core::canonical_seconds(value.value);
        if (!seconds)
            return error_at(context, value,
                            "expected seconds such as 0, 1 or 0.5 (at most " +
                                std::to_string(static_cast<int>(core::k_max_axis_seconds)) +
                                ", 9 decimals), got '" + value.value + "'");
        value.value = *seconds;
    } else if (def && def->kind == core::AxisKind::boolean) {
        auto boolean = core::canonical_boolean(value.value);
        if (!boolean)
            return error_at(context, value, "expected true or false, got '" + value.value + "'");
        value.value = *boolean;
    } else if (axis == "config") {
        if (!is_fragment_name(value.value))
            return error_at(context, value,
                            "config fragment names use only a-z, 0-9, '_' and '-', got '" +
                                value.value + "'");
    }
    return value;
}

// Rejects a value listed twice; `written` holds the values as the user wrote them, so the
// message can say why "4K" and "4096" collide.
Expected<void> check_unique(const Context& context, const std::vector<Located>& values,
                            const std::vector<std::string>& written) {
    std::map<std::string, const Located*> seen;
    for (size_t i = 0; i < values.size(); ++i) {
        auto [first, inserted] = seen.emplace(values[i].value, &values[i]);
        if (inserted)
            continue;
        std::string shown = "'" + written[i] + "'";
        if (written[i] != values[i].value)
            shown += " (" + values[i].value + ")";
        return error_at(context, values[i],
                        "duplicate value " + shown + "; already listed at line " +
                            std::to_string(first->second->loc.line));
    }
    return {};
}

Expected<std::vector<Located>> read_axis_values(const Context& context, std::string_view axis,
                                                const YAML::Node& node, std::string_view path) {
    std::vector<Located> values = RIG_TRY(read_scalars(context, node, path, Shape::scalar_or_list));
    std::vector<std::string> written;
    for (Located& value : values) {
        written.push_back(value.value);
        value = RIG_TRY(canonical_axis_value(context, axis, std::move(value)));
    }
    RIG_TRY(check_unique(context, values, written));
    return values;
}

// A list of strings where an empty list just means "none".
Expected<std::vector<std::string>> read_string_list(const Context& context, const YAML::Node& node,
                                                    std::string_view path) {
    std::vector<std::string> out;
    if (node.IsSequence() && node.size() == 0)
        return out;
    for (const Located& value : RIG_TRY(read_scalars(context, node, path, Shape::list)))
        out.push_back(value.value);
    return out;
}

// Values handed to other programs as arguments must not look like options.
Expected<Located> read_argument(const Context& context, const YAML::Node& node,
                                std::string_view path, std::string_view what) {
    Located value = RIG_TRY(read_scalar(context, node, path, what));
    if (value.value.front() == '-')
        return error_at(context, value, "must not start with '-', got '" + value.value + "'");
    return value;
}

Expected<void> read_git_details(const Context& context, const std::vector<Entry>& entries,
                                core::Kernel& kernel) {
    for (const Entry& entry : entries) {
        if (entry.key == "ref") {
            kernel.ref =
                RIG_TRY(read_argument(context, entry.value, entry.path, "a git ref")).value;
        } else if (entry.key == "config") {
            if (entry.value.IsSequence() && entry.value.size() == 0)
                continue;
            for (Located fragment :
                 RIG_TRY(read_scalars(context, entry.value, entry.path, Shape::list)))
                kernel.config.push_back(
                    RIG_TRY(canonical_axis_value(context, "config", std::move(fragment))).value);
        } else if (entry.key == "patches") {
            kernel.patches = RIG_TRY(read_string_list(context, entry.value, entry.path));
        } else if (entry.key == "options") {
            for (const Entry& option :
                 RIG_TRY(read_map(context, entry.value, entry.path, nullptr))) {
                if (!util::starts_with(option.key, "CONFIG_") || option.key.size() == 7 ||
                    !is_word(option.key, "_", true) ||
                    std::any_of(option.key.begin(), option.key.end(),
                                [](char c) { return c >= 'a' && c <= 'z'; }))
                    return error_at(context, option.key_node, option.path,
                                    "kernel options are named CONFIG_[A-Z0-9_]+, got '" +
                                        option.key + "'");
                kernel.options[option.key] =
                    RIG_TRY(read_scalar(context, option.value, option.path, "a value (y, m, n)"))
                        .value;
            }
        }
    }
    return {};
}

// `flavour: cloud-amd64` picks the flavour a `debian:` series resolves to; an exact or
// metapackage name carries its flavour in itself.
Expected<void> read_flavour(const Context& context, const Entry& entry, core::Kernel& kernel) {
    if (kernel.source != core::KernelSource::debian || !core::is_debian_series(kernel.package))
        return error_at(context, entry.key_node, entry.path,
                        "'flavour' applies only to a Debian series such as "
                        "'debian: linux-image-6.1' (a package name carries its flavour)");
    kernel.flavour =
        RIG_TRY(read_argument(context, entry.value, entry.path, "a flavour (amd64)")).value;
    if (!is_word(kernel.flavour, "-", false))
        return error_at(context, entry.value, entry.path,
                        "flavours use only a-z, 0-9 and '-' (amd64, cloud-amd64), got '" +
                            kernel.flavour + "'");
    return {};
}

// `name_loc` receives where the name is written, for the duplicate-name message.
Expected<core::Kernel> read_kernel(const Context& context, const Item& item, core::Loc& name_loc) {
    std::vector<Entry> entries = RIG_TRY(read_map(context, item.node, item.path, &k_kernel_keys));
    core::Kernel kernel;
    kernel.loc = loc_of(item.node);
    kernel.path = item.path;

    const Entry* name = find_entry(entries, "name");
    if (!name)
        return error_at(context, item.node, child_path(item.path, "name"), "missing required key");
    Located name_value = RIG_TRY(read_scalar(context, name->value, name->path, "a name"));
    // Kernel names label report columns and artifact folders.
    if (!is_word(name_value.value, "._+-"))
        return error_at(context, name_value,
                        "kernel names use only letters, digits, '.', '_', '+' and '-', got '" +
                            name_value.value + "'");
    kernel.name = name_value.value;
    name_loc = name_value.loc;

    const Entry* source = nullptr;
    for (const Entry& entry : entries) {
        if (!contains(k_sources, entry.key))
            continue;
        if (source)
            return error_at(context, entry.key_node, entry.path,
                            "a kernel has exactly one source, but '" + source->key + "' and '" +
                                entry.key + "' are both given");
        source = &entry;
    }
    if (!source)
        return error_at(context, item.node, item.path,
                        "missing a source: give one of debian, image, git");

    if (source->key == "debian") {
        kernel.source = core::KernelSource::debian;
        kernel.package =
            RIG_TRY(read_argument(context, source->value, source->path, "a package name")).value;
        // apt-get receives it as one argument: a space or a capital is a typo.
        if (!is_word(kernel.package, "+.-", false))
            return error_at(context, source->value, source->path,
                            "Debian package names use only a-z, 0-9, '+', '.' and '-', got '" +
                                kernel.package + "'");
    } else if (source->key == "image") {
        kernel.source = core::KernelSource::image;
        kernel.image = RIG_TRY(read_scalar(context, source->value, source->path, "a path")).value;
    } else {
        kernel.source = core::KernelSource::git;
        kernel.repo = RIG_TRY(read_scalar(context, source->value, source->path, "a path")).value;
    }

    for (const Entry& entry : entries) {
        if (contains(k_git_only, entry.key) && kernel.source != core::KernelSource::git)
            return error_at(context, entry.key_node, entry.path,
                            "'" + entry.key + "' applies only to git kernels (this one is '" +
                                source->key + "')");
        if (entry.key == "modules") {
            if (kernel.source != core::KernelSource::image)
                return error_at(context, entry.key_node, entry.path,
                                "'modules' applies only to image kernels (this one is '" +
                                    source->key + "')");
            kernel.modules = RIG_TRY(read_scalar(context, entry.value, entry.path, "a path")).value;
        }
        if (entry.key == "build") {
            if (kernel.source != core::KernelSource::image)
                return error_at(context, entry.key_node, entry.path,
                                "'build' applies only to image kernels (this one is '" +
                                    source->key + "'; rig knows where the others' trees are)");
            kernel.build = RIG_TRY(read_scalar(context, entry.value, entry.path, "a folder")).value;
        }
        if (entry.key == "flavour")
            RIG_TRY(read_flavour(context, entry, kernel));
    }
    if (kernel.source == core::KernelSource::git) {
        if (!find_entry(entries, "ref"))
            return error_at(context, item.node, child_path(item.path, "ref"),
                            "missing required key (a git kernel needs a tag, branch or commit)");
        RIG_TRY(read_git_details(context, entries, kernel));
    }
    return kernel;
}

Expected<std::vector<core::Kernel>> read_kernels(const Context& context, const Entry& entry) {
    std::vector<Item> items = RIG_TRY(read_list(context, entry.value, entry.path));
    if (items.empty())
        return error_at(context, entry.value, entry.path,
                        "empty list; declare at least one kernel");
    std::vector<core::Kernel> kernels;
    std::map<std::string, int> first_line;
    for (const Item& item : items) {
        core::Loc name_loc;
        core::Kernel kernel = RIG_TRY(read_kernel(context, item, name_loc));
        auto [first, inserted] = first_line.emplace(kernel.name, name_loc.line);
        if (!inserted)
            return core::config_error(context.file, name_loc, child_path(item.path, "name"),
                                      "duplicate kernel name '" + kernel.name +
                                          "' (first at line " + std::to_string(first->second) +
                                          ")");
        kernels.push_back(std::move(kernel));
    }
    return kernels;
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
    static const std::vector<std::string> k_rule_keys = [] {
        std::vector<std::string> keys = core::axis_names();
        keys.push_back("kernel");
        return keys;
    }();
    std::vector<std::string> kernel_names;
    for (const core::Kernel& kernel : kernels)
        kernel_names.push_back(kernel.name);

    std::vector<core::Rule> rules;
    for (const Item& item : RIG_TRY(read_list(context, entry.value, entry.path))) {
        core::Rule rule;
        rule.loc = loc_of(item.node);
        rule.path = item.path;
        std::vector<Entry> keys = RIG_TRY(read_map(context, item.node, item.path, &k_rule_keys));
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

Expected<core::GenerateParams> read_generate(const Context& context, const Entry& entry) {
    core::GenerateParams params;
    // `generate:` with nothing after it asks for the defaults, as `generate: {}` does.
    if (entry.value.IsNull())
        return params;
    // Bounds keep a typo from filling the share: the tree is written afresh per sample.
    for (const Entry& key : RIG_TRY(read_map(context, entry.value, entry.path, &k_generate_keys))) {
        if (key.key == "units")
            params.units =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 1, 10000)));
        else if (key.key == "headers")
            params.headers =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 0, 1000)));
        else
            params.functions =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 1, 10000)));
    }
    return params;
}

// Names become metric prefixes and guest file names: a short word, each once.
Expected<std::vector<core::WorkloadPhase>> read_phases(const Context& context, const Entry& entry) {
    std::vector<core::WorkloadPhase> phases;
    for (const Entry& phase : RIG_TRY(read_map(context, entry.value, entry.path, nullptr))) {
        if (!is_word(phase.key, "_-", true) || phase.key.size() > 32)
            return error_at(context, phase.key_node, phase.path,
                            "phase names use only letters, digits, '_' and '-' (at most 32), "
                            "got '" +
                                phase.key + "'");
        // Read before the pair is built: a RIG_TRY that returns from inside a braced
        // initializer would leak the members built before it.
        std::string command =
            RIG_TRY(read_scalar(context, phase.value, phase.path, "a command")).value;
        phases.push_back({phase.key, std::move(command)});
    }
    if (phases.empty())
        return error_at(context, entry.value, entry.path, "give at least one phase");
    return phases;
}

// Parameters reach insmod as single arguments NAME=VALUE; the agent checks them again.
Expected<std::vector<std::pair<std::string, std::string>>>
read_module_params(const Context& context, const Entry& entry) {
    std::vector<std::pair<std::string, std::string>> params;
    for (const Entry& param : RIG_TRY(read_map(context, entry.value, entry.path, nullptr))) {
        if (!is_word(param.key, "_", true) || param.key.size() > 64)
            return error_at(context, param.key_node, param.path,
                            "module parameter names use only letters, digits and '_', got '" +
                                param.key + "'");
        Located value = RIG_TRY(read_scalar(context, param.value, param.path, "a value"));
        if (!is_word(value.value, "_.,:+-", true))
            return error_at(context, value,
                            "module parameter values use only letters, digits and '_.,:+-', "
                            "got '" +
                                value.value + "'");
        params.emplace_back(param.key, value.value);
    }
    return params;
}

Expected<core::Workload> read_module_workload(const Context& context,
                                              const std::vector<Entry>& keys) {
    for (const Entry& key : keys)
        if (key.key != "module" && key.key != "params")
            return error_at(context, key.key_node, key.path,
                            "a module workload has only 'module' and 'params' (its output is "
                            "the module's printk lines)");
    const Entry& module = *find_entry(keys, "module");
    core::Workload workload;
    workload.kind = core::WorkloadKind::module;
    workload.command.clear();
    workload.module =
        RIG_TRY(read_scalar(context, module.value, module.path, "a .c file or a folder")).value;
    if (const Entry* params = find_entry(keys, "params"))
        workload.module_params = RIG_TRY(read_module_params(context, *params));
    return workload;
}

Expected<core::Workload> read_workload(const Context& context, const Entry& entry) {
    std::vector<Entry> keys =
        RIG_TRY(read_map(context, entry.value, entry.path, &k_workload_keys, {"generate"}));
    if (find_entry(keys, "module"))
        return read_module_workload(context, keys);
    if (const Entry* params = find_entry(keys, "params"))
        return error_at(context, params->key_node, params->path,
                        "'params' applies only to a module workload");
    const Entry* generate = find_entry(keys, "generate");
    const Entry* tree = find_entry(keys, "tree");
    const Entry* command = find_entry(keys, "command");
    const Entry* phases = find_entry(keys, "phases");
    core::Workload workload;
    if (command && phases) {
        const Entry* second =
            command->key_node.Mark().pos < phases->key_node.Mark().pos ? phases : command;
        return error_at(context, second->key_node, second->path,
                        "give either 'command' or 'phases', not both");
    }
    if (command) {
        workload.command =
            RIG_TRY(read_scalar(context, command->value, command->path, "a command")).value;
    }
    if (phases) {
        workload.phases = RIG_TRY(read_phases(context, *phases));
        command = phases; // what to run is given
    }
    if (generate && tree) {
        const Entry* second =
            generate->key_node.Mark().pos < tree->key_node.Mark().pos ? tree : generate;
        return error_at(context, second->key_node, second->path,
                        "give either 'generate' or 'tree', not both");
    }
    if (generate) {
        workload.kind = core::WorkloadKind::generate;
        workload.generate = RIG_TRY(read_generate(context, *generate));
        if (!command)
            workload.command = k_default_generate_command;
    } else if (tree) {
        workload.kind = core::WorkloadKind::tree;
        workload.tree = RIG_TRY(read_scalar(context, tree->value, tree->path, "a path")).value;
        if (!command)
            return error_at(context, entry.value, child_path(entry.path, "command"),
                            "missing required key (what to run in the tree)");
    } else if (command) {
        workload.kind = core::WorkloadKind::command;
    } else {
        return error_at(context, entry.value, entry.path,
                        "give 'generate', 'tree', 'command' or 'phases'");
    }
    return workload;
}

Expected<core::Guest> read_guest(const Context& context, const Entry& entry) {
    core::Guest guest;
    for (const Entry& key : RIG_TRY(read_map(context, entry.value, entry.path, &k_guest_keys))) {
        if (key.key == "memory") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a size"));
            auto bytes = util::parse_size(text.value);
            if (!bytes)
                return error_at(context, text,
                                "expected a size such as 1G or 512M, got '" + text.value + "'");
            constexpr uint64_t k_mib = 1ULL << 20;
            if (*bytes % k_mib != 0)
                return error_at(context, text,
                                "memory must be a whole number of MiB, got '" + text.value +
                                    "' (a bare number is bytes)");
            if (*bytes / k_mib < k_min_memory_mib)
                return error_at(context, text,
                                "memory must be at least " + std::to_string(k_min_memory_mib) +
                                    "M, got '" + text.value + "'");
            guest.memory_mib = *bytes / k_mib;
        } else if (key.key == "cpus") {
            guest.cpus =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 1, 64)));
        } else if (key.key == "count_9p") {
            Located value = RIG_TRY(read_scalar(context, key.value, key.path, "true or false"));
            auto boolean = core::canonical_boolean(value.value);
            if (!boolean)
                return error_at(context, value,
                                "expected true or false, got '" + value.value + "'");
            guest.count_9p = *boolean == "true";
        } else if (key.key == "scratch") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a size"));
            auto bytes = util::parse_size(text.value);
            constexpr uint64_t k_mib = 1ULL << 20;
            if (!bytes || *bytes == 0)
                return error_at(context, text,
                                "expected a disk size such as 256M or 1G, got '" + text.value +
                                    "'");
            if (*bytes % k_mib != 0)
                return error_at(context, text,
                                "scratch must be a whole number of MiB, got '" + text.value +
                                    "' (a bare number is bytes)");
            if (*bytes / k_mib > k_max_scratch_mib)
                return error_at(context, text,
                                "scratch must be at most 1T (a sparse file per sample), got '" +
                                    text.value + "'");
            guest.scratch_bytes = *bytes;
        } else {
            Located accel = RIG_TRY(read_scalar(context, key.value, key.path, "an accelerator"));
            std::optional<core::Accel> requested = core::parse_accel(accel.value);
            if (!requested)
                return error_at(context, accel, unknown("accel", accel.value, core::accel_words()));
            guest.accel = *requested;
        }
    }
    return guest;
}

Expected<core::Timeouts> read_timeouts(const Context& context, const Entry& entry) {
    core::Timeouts timeouts;
    for (const Entry& key : RIG_TRY(read_map(context, entry.value, entry.path, &k_timeout_keys))) {
        Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a duration"));
        auto duration = util::parse_duration(text.value);
        if (!duration)
            return error_at(context, text,
                            "expected a duration such as 90s, 2m or 1h30m, got '" + text.value +
                                "'");
        if (duration->count() <= 0)
            return error_at(context, text, "must be longer than 0, got '" + text.value + "'");
        if (key.key == "boot")
            timeouts.boot = *duration;
        else if (key.key == "workload")
            timeouts.workload = *duration;
        else
            timeouts.silence = *duration;
    }
    return timeouts;
}

// Names of partitions, accounts and features: Slurm's own characters, so that a value can
// only ever be one sbatch argument's value. A constraint may combine features (&|,*[]()).
Expected<Located> read_slurm_name(const Context& context, const Entry& key,
                                  std::string_view extra) {
    Located value = RIG_TRY(read_argument(context, key.value, key.path, "a name"));
    if (!is_word(value.value, extra))
        return error_at(context, value,
                        "use only letters, digits and '" + std::string(extra) + "', got '" +
                            value.value + "'");
    return value;
}

// Each item is one sbatch option, such as --qos=high or --mem=4G; options rig sets for
// every job cannot be overridden here.
Expected<std::vector<Located>> read_sbatch_arguments(const Context& context, const Entry& key) {
    std::vector<Located> arguments =
        RIG_TRY(read_scalars(context, key.value, key.path, Shape::list));
    for (const Located& argument : arguments) {
        if (argument.value.front() != '-')
            return error_at(context, argument,
                            "each item is one sbatch option starting with '-', got '" +
                                argument.value + "'");
        std::string option = argument.value.substr(0, argument.value.find('='));
        if (contains(k_sbatch_owned, option) || (option.size() > 2 && option[1] != '-' &&
                                                 contains(k_sbatch_owned, option.substr(0, 2))))
            return error_at(context, argument,
                            "rig sets " + option + " itself for every job; remove it");
    }
    return arguments;
}

Expected<core::Slurm> read_slurm(const Context& context, const Entry& entry) {
    core::Slurm slurm;
    slurm.loc = loc_of(entry.key_node);
    for (const Entry& key : RIG_TRY(read_map(context, entry.value, entry.path, &k_slurm_keys))) {
        if (key.key == "partition") {
            slurm.partition = RIG_TRY(read_slurm_name(context, key, "._-"));
        } else if (key.key == "account") {
            slurm.account = RIG_TRY(read_slurm_name(context, key, "._-"));
        } else if (key.key == "constraint") {
            slurm.constraint = RIG_TRY(read_slurm_name(context, key, "._-&|,*[]()"));
        } else if (key.key == "time") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a duration"));
            auto duration = util::parse_duration(text.value);
            if (!duration)
                return error_at(context, text,
                                "expected a duration such as 90m or 2h, got '" + text.value + "'");
            if (duration->count() <= 0)
                return error_at(context, text, "must be longer than 0, got '" + text.value + "'");
            // sbatch counts whole minutes; a limit never rounds down below what was asked.
            slurm.time_limit = std::chrono::ceil<std::chrono::minutes>(*duration);
            slurm.time = text;
        } else if (key.key == "exclusive") {
            Located value = RIG_TRY(read_scalar(context, key.value, key.path, "true or false"));
            auto boolean = core::canonical_boolean(value.value);
            if (!boolean)
                return error_at(context, value,
                                "expected true or false, got '" + value.value + "'");
            slurm.exclusive = *boolean == "true";
        } else if (key.key == "sbatch") {
            slurm.sbatch = RIG_TRY(read_sbatch_arguments(context, key));
        } else {
            Located value = RIG_TRY(read_scalar(context, key.value, key.path, "a folder"));
            if (value.value.front() != '/')
                return error_at(context, value,
                                "the shared folder must be an absolute path (every node sees it "
                                "at the same place), got '" +
                                    value.value + "'");
            slurm.shared = value.value;
        }
    }
    return slurm;
}

Expected<void> read_backend(const Context& context, const std::vector<Entry>& entries,
                            core::Scenario& scenario) {
    if (const Entry* backend = find_entry(entries, "backend")) {
        Located value = RIG_TRY(read_scalar(context, backend->value, backend->path, "a backend"));
        auto parsed = core::parse_backend(value.value);
        if (!parsed)
            return error_at(context, value, unknown("backend", value.value, core::backend_words()));
        scenario.backend = *parsed;
    }
    for (std::string_view key : {"uri", "hosts"}) {
        const Entry* entry = find_entry(entries, key);
        if (entry && scenario.backend != core::Backend::libvirt)
            return error_at(context, entry->key_node, entry->path,
                            "'" + std::string(key) +
                                "' applies only to backend libvirt (backend is " +
                                std::string(core::to_string(scenario.backend)) + ")");
    }
    if (const Entry* slurm = find_entry(entries, "slurm")) {
        if (scenario.backend != core::Backend::slurm)
            return error_at(context, slurm->key_node, slurm->path,
                            "'slurm' applies only to backend slurm (backend is " +
                                std::string(core::to_string(scenario.backend)) + ")");
        scenario.slurm = RIG_TRY(read_slurm(context, *slurm));
    } else if (const Entry* backend = find_entry(entries, "backend")) {
        scenario.slurm.loc = loc_of(backend->value);
    }
    if (const Entry* uri = find_entry(entries, "uri")) {
        Located value = RIG_TRY(read_scalar(context, uri->value, uri->path, "a libvirt URI"));
        if (value.value.find(":/") == std::string::npos)
            return error_at(context, value,
                            "expected a libvirt URI such as qemu:///system, got '" + value.value +
                                "'");
        scenario.uri = value.value;
    }
    if (const Entry* hosts = find_entry(entries, "hosts")) {
        std::vector<Located> values =
            RIG_TRY(read_scalars(context, hosts->value, hosts->path, Shape::list));
        std::vector<std::string> written;
        for (const Located& value : values) {
            if (value.value.find(":/") == std::string::npos)
                return error_at(context, value,
                                "expected a libvirt URI such as qemu+ssh://host/system, got '" +
                                    value.value + "'");
            written.push_back(value.value);
        }
        RIG_TRY(check_unique(context, values, written));
        scenario.hosts = std::move(written);
    }
    return {};
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

// Cells a (sub-)matrix yields before exclusions, as core::expand would multiply them.
uint64_t count_cells(const core::Scenario& scenario,
                     const std::map<std::string, std::vector<Located>>& axes,
                     const std::map<std::string, std::vector<Located>>& cache_by_fs,
                     const std::vector<size_t>& kernels) {
    static const std::vector<Located> k_default_fs_values{
        {std::string(core::k_default_fs), {}, "matrix.fs"}};
    auto fs_it = axes.find("fs");
    const auto& fs_values = fs_it == axes.end() ? k_default_fs_values : fs_it->second;
    uint64_t total = 0;
    for (size_t kernel : kernels) {
        for (const Located& fs_value : fs_values) {
            const core::Filesystem* found = core::find_fs(fs_value.value);
            const core::Filesystem& fs = found ? *found : core::default_fs();
            uint64_t cells = 1;
            for (const core::AxisDef& axis : core::axis_defs()) {
                if (axis.name == "fs" || !core::applies(axis, scenario.kernels[kernel], fs))
                    continue;
                std::string name(axis.name);
                if (auto it = cache_by_fs.find(fs_value.value);
                    name == "cache" && it != cache_by_fs.end())
                    cells *= it->second.size();
                else if (auto axis_it = axes.find(name); axis_it != axes.end())
                    cells *= std::max<size_t>(1, axis_it->second.size());
                cells = std::min(cells, k_max_cells + 1);
            }
            total = std::min(total + cells, k_max_cells + 1);
        }
    }
    return total;
}

Expected<void> check_size(const Context& context, const core::Scenario& scenario) {
    std::map<std::string, std::vector<Located>> axes;
    std::map<std::string, std::vector<Located>> cache_by_fs;
    for (const core::AxisValues& axis : scenario.matrix) {
        axes[axis.name] = axis.values;
        if (axis.name == "cache")
            cache_by_fs = axis.by_fs;
    }
    std::vector<size_t> all_kernels;
    for (size_t k = 0; k < scenario.kernels.size(); ++k)
        all_kernels.push_back(k);
    uint64_t total = count_cells(scenario, axes, cache_by_fs, all_kernels);
    for (const core::Rule& rule : scenario.include) {
        auto rule_axes = axes;
        auto rule_cache = cache_by_fs;
        std::vector<size_t> kernels = all_kernels;
        for (const auto& [key, values] : rule.match) {
            if (key == "kernel") {
                kernels.clear();
                for (size_t k = 0; k < scenario.kernels.size(); ++k)
                    for (const Located& value : values)
                        if (scenario.kernels[k].name == value.value)
                            kernels.push_back(k);
            } else {
                rule_axes[key] = values;
                if (key == "cache")
                    rule_cache.clear();
            }
        }
        total = std::min(total + count_cells(scenario, rule_axes, rule_cache, kernels),
                         k_max_cells + 1);
    }
    if (total > k_max_cells)
        return core::config_error(context.file, scenario.matrix_loc, "matrix",
                                  "more than " + std::to_string(k_max_cells) +
                                      " cells; split the matrix into several scenarios");
    return {};
}

Expected<core::Scenario> read_scenario(const Context& context, const YAML::Node& root,
                                       std::string_view text) {
    if (!root.IsMap())
        return error_at(context, root, "",
                        "the top level must be a map of keys (name, kernels, matrix, ...), got " +
                            describe(root));
    std::vector<Entry> entries = RIG_TRY(read_map(context, root, "", &k_top_keys));
    core::Scenario scenario;
    scenario.file = context.file;
    scenario.text = std::string(text);

    const Entry* name = find_entry(entries, "name");
    if (!name)
        return error_at(context, root, "name", "missing required key");
    Located name_value = RIG_TRY(read_scalar(context, name->value, name->path, "a name"));
    // The name becomes part of folder and report names.
    if (!is_word(name_value.value, "._-"))
        return error_at(context, name_value,
                        "scenario names use only letters, digits, '.', '_' and '-', got '" +
                            name_value.value + "'");
    scenario.name = name_value.value;

    const Entry* kernels = find_entry(entries, "kernels");
    if (!kernels)
        return error_at(context, root, "kernels", "missing required key");
    scenario.kernels = RIG_TRY(read_kernels(context, *kernels));

    scenario.matrix_loc = loc_of(root);
    if (const Entry* matrix = find_entry(entries, "matrix")) {
        scenario.matrix_loc = loc_of(matrix->value);
        scenario.matrix = RIG_TRY(read_matrix(context, *matrix));
    }
    if (const Entry* exclude = find_entry(entries, "exclude"))
        scenario.exclude = RIG_TRY(read_rules(context, *exclude, scenario.kernels));
    if (const Entry* include = find_entry(entries, "include"))
        scenario.include = RIG_TRY(read_rules(context, *include, scenario.kernels));

    scenario.workload.command = k_default_generate_command;
    if (const Entry* workload = find_entry(entries, "workload"))
        scenario.workload = RIG_TRY(read_workload(context, *workload));
    if (scenario.workload.kind == core::WorkloadKind::module)
        for (const core::Kernel& kernel : scenario.kernels)
            if (kernel.source == core::KernelSource::image && kernel.build.empty())
                return core::config_error(context.file, kernel.loc, kernel.path + ".build",
                                          "a module workload needs the build folder of image "
                                          "kernel '" +
                                              kernel.name +
                                              "' (the O= folder it was built in, or its headers)");
    if (const Entry* repeat = find_entry(entries, "repeat"))
        scenario.repeat =
            static_cast<int>(RIG_TRY(read_integer(context, repeat->value, repeat->path, 1, 1000)));
    if (const Entry* warmup = find_entry(entries, "warmup"))
        scenario.warmup =
            static_cast<int>(RIG_TRY(read_integer(context, warmup->value, warmup->path, 0, 1000)));
    if (const Entry* jobs = find_entry(entries, "jobs")) {
        scenario.jobs =
            static_cast<int>(RIG_TRY(read_integer(context, jobs->value, jobs->path, 1, 1024)));
        scenario.jobs_loc = loc_of(jobs->value);
    }
    if (const Entry* guest = find_entry(entries, "guest"))
        scenario.guest = RIG_TRY(read_guest(context, *guest));
    if (const Entry* timeouts = find_entry(entries, "timeouts"))
        scenario.timeouts = RIG_TRY(read_timeouts(context, *timeouts));
    RIG_TRY(read_backend(context, entries, scenario));
    if (scenario.workload.kind == core::WorkloadKind::module &&
        scenario.backend == core::Backend::slurm)
        return core::config_error(context.file, scenario.slurm.loc, "backend",
                                  "a module workload runs on backends qemu and libvirt; a "
                                  "Slurm job does not carry the built module yet");

    RIG_TRY(check_cache_covers_fs(context, scenario));
    RIG_TRY(check_size(context, scenario));
    // Expanding here makes parse the one place that reports scenario errors, including
    // those only the whole matrix reveals (a cache invalid for its fs, nothing left).
    RIG_TRY(core::expand(scenario));
    return scenario;
}

core::Loc loc_of_offset(std::string_view text, size_t offset) {
    core::Loc loc{1, 1};
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++loc.line;
            loc.column = 1;
        } else {
            ++loc.column;
        }
    }
    return loc;
}

Expected<core::Scenario> parse_text(const Context& context, std::string_view text) {
    // yaml-cpp reads a NUL as an ordinary character; a NUL means a binary file was given.
    if (size_t nul = text.find('\0'); nul != std::string_view::npos)
        return core::config_error(context.file, loc_of_offset(text, nul), "",
                                  "contains a NUL byte; is this a YAML text file?");
    YAML::Node root = RIG_TRY(load_document(context, std::string(text)));
    if (root.IsNull())
        return core::config_error(context.file, {1, 1}, "",
                                  "the file is empty; a scenario needs at least name and kernels");
    return read_scenario(context, root, text);
}

} // namespace

Expected<core::Scenario> parse_scenario(std::string_view text, const std::string& file_label) {
    Context context{file_label};
    // yaml-cpp reports through exceptions; they stop here, as the folder's contract says.
    try {
        auto scenario = parse_text(context, text);
        if (scenario)
            scenario->dir = std::filesystem::absolute(file_label).parent_path().string();
        return scenario;
    } catch (const YAML::DeepRecursion& e) {
        return core::config_error(context.file, loc_of(e.mark), "",
                                  "nesting too deep (more than " + std::to_string(e.depth()) +
                                      " levels)");
    } catch (const YAML::ParserException& e) {
        return core::config_error(context.file, loc_of(e.mark), "", "YAML syntax error: " + e.msg);
    } catch (const YAML::Exception& e) {
        return core::config_error(context.file, loc_of(e.mark), "", "cannot read YAML: " + e.msg);
    } catch (const std::exception& e) {
        return core::config_error(context.file, {}, "", std::string("cannot parse: ") + e.what());
    }
}

Expected<core::Scenario> load_scenario(const std::filesystem::path& file) {
    // POSIX calls rather than iostreams: they give the errno to report, including EISDIR.
    std::string label = file.string();
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(ErrorKind::config, label + ": cannot read: " + std::strerror(errno));
    std::string text;
    char buffer[65536];
    while (true) {
        ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int saved = errno;
            ::close(fd);
            return fail(ErrorKind::config, label + ": cannot read: " + std::strerror(saved));
        }
        if (got == 0)
            break;
        text.append(buffer, static_cast<size_t>(got));
    }
    ::close(fd);
    return parse_scenario(text, label);
}

} // namespace rig::spec
