// SPDX-License-Identifier: MIT
// Where the samples run: the backend, its libvirt hosts and its Slurm settings.
#include "spec/backend.hpp"

#include "core/axis.hpp"
#include "spec/keys.hpp"
#include "spec/reader_context.hpp"
#include "util/units.hpp"

#include <chrono>

namespace rig::spec {

using core::Located;

namespace {

// sbatch options rig sets itself for every job: the array, its name (how a resumed run
// finds its jobs), where output goes, and the script with its arguments.
const std::vector<std::string> k_sbatch_owned{
    "--array", "-a", "--job-name", "-J",     "--output",  "-o",           "--error",         "-e",
    "--chdir", "-D", "--parsable", "--wrap", "--requeue", "--no-requeue", "--cpus-per-task", "-c"};

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
            auto duration = RIG_TRY(duration_of(context, text, "90m or 2h"));
            // sbatch counts whole minutes; a limit never rounds down below what was asked.
            slurm.time_limit = std::chrono::ceil<std::chrono::minutes>(duration);
            slurm.time = text;
        } else if (key.key == "exclusive") {
            slurm.exclusive = RIG_TRY(read_boolean(context, key.value, key.path));
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

} // namespace

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
} // namespace rig::spec
