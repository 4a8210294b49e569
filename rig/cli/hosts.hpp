// SPDX-License-Identifier: MIT
// Where a run's samples go, as `rig run` and `rig watch` choose it: the local QEMU, one
// hypervisor per libvirt URI, or Slurm jobs; and the run settings that follow.
#pragma once

#include "cli/commands.hpp"
#include "core/scenario.hpp"
#include "run/runner.hpp"
#include "util/error.hpp"
#include "vm/hypervisor.hpp"

#include <memory>
#include <vector>

namespace rig::cli {

struct Hypervisors {
    std::vector<std::unique_ptr<vm::Hypervisor>> owned;
    std::vector<run::Host> hosts;
};

core::Backend chosen_backend(const core::Scenario& scenario, const RunCommandOptions& options);

// A usage error for options that do not fit the backend (--uri without libvirt, ...).
Expected<Hypervisors> choose_hypervisors(const core::Scenario& scenario,
                                         const RunCommandOptions& options);

// Results beside the database, kernels in the user's cache, batch jobs on backend slurm.
run::RunSettings run_settings(const GlobalOptions& global, const core::Scenario& scenario,
                              const RunCommandOptions& options);

} // namespace rig::cli
