// SPDX-License-Identifier: MIT
// The `workload:` key read into core::Workload.
#include "spec/workload.hpp"

#include "core/scenario.hpp"
#include "spec/keys.hpp"
#include "spec/reader_context.hpp"

namespace rig::spec {

using core::Located;

namespace {

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
        if (!core::is_phase_name(phase.key))
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

} // namespace

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
} // namespace rig::spec
