// SPDX-License-Identifier: MIT
// The hypervisors and run settings of `rig run` and `rig watch`.
#include "cli/hosts.hpp"

#include "kernel/artifact.hpp"
#include "vm/libvirt.hpp"
#include "vm/qemu.hpp"

#include <unistd.h>

namespace rig::cli {

core::Backend chosen_backend(const core::Scenario& scenario, const RunCommandOptions& options) {
    return options.backend.value_or(scenario.backend);
}

Expected<Hypervisors> choose_hypervisors(const core::Scenario& scenario,
                                         const RunCommandOptions& options) {
    core::Backend backend = chosen_backend(scenario, options);
    bool libvirt = backend == core::Backend::libvirt;
    Hypervisors chosen;
    if (backend == core::Backend::slurm) {
        if (!options.uris.empty())
            return fail(ErrorKind::usage, "--uri applies only to backend libvirt, not slurm");
        if (options.jobs > 0)
            return fail(ErrorKind::usage, "--jobs applies to backends qemu and libvirt; on "
                                          "slurm the cluster runs as many samples as it has "
                                          "room for");
        return chosen; // the nodes boot the guests
    }
    if (!libvirt) {
        if (!options.uris.empty())
            return fail(ErrorKind::usage, "--uri applies only to backend libvirt; add "
                                          "--backend libvirt");
        chosen.owned.push_back(vm::make_qemu_hypervisor());
        chosen.hosts.push_back({"local", chosen.owned.back().get()});
        return chosen;
    }
    std::vector<std::string> uris = options.uris;
    if (uris.empty())
        uris = scenario.hosts.empty() ? std::vector<std::string>{scenario.uri} : scenario.hosts;
    for (const std::string& uri : uris) {
        for (const run::Host& host : chosen.hosts)
            if (host.name == uri)
                return fail(ErrorKind::usage, "libvirt URI " + uri + " given twice");
        chosen.owned.push_back(vm::make_libvirt_hypervisor(uri));
        chosen.hosts.push_back({uri, chosen.owned.back().get()});
    }
    return chosen;
}

run::RunSettings run_settings(const GlobalOptions& global, const core::Scenario& scenario,
                              const RunCommandOptions& options) {
    run::RunSettings settings;
    // Absolute: QEMU and the sandboxed virtiofsd resolve paths from their own cwd.
    settings.results_dir =
        std::filesystem::absolute(global.db.parent_path().empty() ? "." : global.db.parent_path());
    settings.cache_dir = kernel::default_cache_dir();
    settings.tty = ::isatty(STDOUT_FILENO) != 0;
    settings.jobs = options.jobs;
    settings.backend = options.backend;
    settings.uris = options.uris;
    settings.db = global.db;
    if (chosen_backend(scenario, options) == core::Backend::slurm) {
        settings.batch = true;
        settings.shared = scenario.slurm.shared;
        std::error_code ec;
        settings.program = std::filesystem::read_symlink("/proc/self/exe", ec);
    }
    return settings;
}

} // namespace rig::cli
