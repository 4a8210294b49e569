// SPDX-License-Identifier: MIT
// The `workload:` key read into core::Workload.
#include "spec/workload.hpp"

#include "core/scenario.hpp"
#include "spec/keys.hpp"
#include "spec/reader_context.hpp"
#include "spec/yaml_reader.hpp"
#include "util/units.hpp"

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

Expected<core::ReadbackParams> read_readback(const Context& context, const Entry& entry) {
    core::ReadbackParams params;
    if (entry.value.IsNull())
        return params;
    for (const Entry& key : RIG_TRY(read_map(context, entry.value, entry.path, &k_readback_keys))) {
        if (key.key == "files") {
            params.files =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 1, 1000)));
            continue;
        }
        Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a size"));
        constexpr uint64_t k_most = 256ULL << 20;
        auto bytes = util::parse_size(text.value);
        if (!bytes || *bytes == 0 || *bytes > k_most)
            return error_at(context, text,
                            "expected a file size from 1 byte to 256M, such as 64K, got '" +
                                text.value + "'");
        params.bytes = *bytes;
    }
    return params;
}

// The coherency probe: which changes, one file each, and how long the guest watches each.
Expected<core::CoherencyParams> read_coherency(const Context& context, const Entry& entry) {
    core::CoherencyParams params;
    bool listed = false;
    for (const Entry& key :
         RIG_TRY(read_map(context, entry.value, entry.path, &k_coherency_keys))) {
        if (key.key == "window") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a duration"));
            params.window = RIG_TRY(duration_of(context, text, "3s or 500ms"));
            if (params.window > std::chrono::minutes(1))
                return error_at(context, text,
                                "expected a window of at most 1m, got '" + text.value + "'");
            continue;
        }
        listed = true;
        std::vector<Located> given =
            RIG_TRY(read_scalars(context, key.value, key.path, Shape::list));
        if (given.empty() || given.size() > core::k_max_coherency_changes)
            return error_at(context, key.value, key.path,
                            "give 1 to " + std::to_string(core::k_max_coherency_changes) +
                                " changes");
        for (const Located& word : given) {
            std::optional<core::Change> change = core::parse_change(word.value);
            if (!change)
                return error_at(context, word, unknown("change", word.value, core::change_words()));
            params.changes.push_back(*change);
        }
    }
    if (!listed)
        return error_at(context, entry.value, child_path(entry.path, "changes"),
                        "missing required key (rewrite, append, rename or delete, as a list)");
    return params;
}

// Globs the agent expands in its shell and the host matches beneath the share.
Expected<std::vector<std::string>> read_outputs(const Context& context, const Entry& entry) {
    std::vector<Located> given =
        RIG_TRY(read_scalars(context, entry.value, entry.path, Shape::list));
    constexpr size_t k_most = 32;
    if (given.empty())
        return error_at(context, entry.value, entry.path, "give at least one glob");
    if (given.size() > k_most)
        return error_at(context, given[k_most], "at most " + std::to_string(k_most) + " globs");
    std::vector<std::string> globs;
    for (const Located& glob : given) {
        if (!core::is_output_glob(glob.value))
            return error_at(context, glob,
                            "expected a glob relative to the share, of letters, digits and "
                            "_ . * ? / - (no '..', no wildcard after a leading '.'), got '" +
                                glob.value + "'");
        globs.push_back(glob.value);
    }
    return globs;
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

// Phases of the workload, each once; a check needs something to check.
Expected<std::vector<std::string>> read_check_after(const Context& context, const Entry& entry,
                                                    const core::Workload& workload) {
    std::vector<Located> given =
        RIG_TRY(read_scalars(context, entry.value, entry.path, Shape::list));
    if (workload.phases.empty())
        return error_at(context, entry.key_node, entry.path,
                        "'check_after' names phases: give the workload 'phases'");
    if (core::output_globs(workload).empty() && !workload.coherency.enabled())
        return error_at(context, entry.key_node, entry.path,
                        "nothing to check: give 'outputs' or 'coherency'");
    std::vector<std::string> names;
    std::vector<std::string> phases;
    for (const core::WorkloadPhase& phase : workload.phases)
        phases.push_back(phase.name);
    for (const Located& name : given) {
        if (!contains(phases, name.value))
            return error_at(context, name, unknown("phase", name.value, phases));
        if (contains(names, name.value))
            return error_at(context, name, "phase '" + name.value + "' is given twice");
        names.push_back(name.value);
    }
    if (names.empty())
        return error_at(context, entry.value, entry.path, "give at least one phase");
    core::Workload checked = workload;
    checked.check_after = names;
    const size_t changes = workload.coherency.changes.size() * core::checks(checked).size();
    if (changes > core::k_max_coherency_changes)
        return error_at(context, entry.key_node, entry.path,
                        "the coherency probe would make " + std::to_string(changes) +
                            " changes (its changes at each check); at most " +
                            std::to_string(core::k_max_coherency_changes) + " in a sample");
    return names;
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

// What it runs and checks is rig's own (workload/readback.hpp).
Expected<core::Workload> read_readback_workload(const Context& context,
                                                const std::vector<Entry>& keys) {
    for (const Entry& key : keys)
        if (key.key != "readback" && key.key != "coherency")
            return error_at(context, key.key_node, key.path,
                            "a readback workload has only 'readback' and 'coherency' (it runs "
                            "and checks its own files)");
    core::Workload workload;
    workload.kind = core::WorkloadKind::readback;
    workload.command.clear();
    workload.readback = RIG_TRY(read_readback(context, *find_entry(keys, "readback")));
    return workload;
}

} // namespace

Expected<core::Workload> read_workload(const Context& context, const Entry& entry) {
    std::vector<Entry> keys = RIG_TRY(
        read_map(context, entry.value, entry.path, &k_workload_keys, {"generate", "readback"}));
    const Entry* coherency = find_entry(keys, "coherency");
    if (find_entry(keys, "module")) {
        if (coherency)
            return error_at(context, coherency->key_node, coherency->path,
                            "'coherency' applies to a workload in the share, not a module");
        return read_module_workload(context, keys);
    }
    if (find_entry(keys, "readback")) {
        core::Workload workload = RIG_TRY(read_readback_workload(context, keys));
        if (coherency)
            workload.coherency = RIG_TRY(read_coherency(context, *coherency));
        return workload;
    }
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
                        "give 'generate', 'tree', 'command', 'phases', 'module' or 'readback'");
    }
    if (const Entry* outputs = find_entry(keys, "outputs"))
        workload.outputs = RIG_TRY(read_outputs(context, *outputs));
    if (coherency)
        workload.coherency = RIG_TRY(read_coherency(context, *coherency));
    if (const Entry* check_after = find_entry(keys, "check_after"))
        workload.check_after = RIG_TRY(read_check_after(context, *check_after, workload));
    return workload;
}
} // namespace rig::spec
