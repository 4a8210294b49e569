// SPDX-License-Identifier: MIT
// One sample: boot a guest for a cell, watch it through its phases, and turn what it
// printed into a core::Sample. Panics, hangs and junk become outcomes, not errors.
#pragma once

#include "core/cell.hpp"
#include "core/sample.hpp"
#include "core/scenario.hpp"
#include "kernel/artifact.hpp"
#include "vm/hypervisor.hpp"

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>

namespace rig::run {

struct SampleContext {
    const core::Scenario& scenario;
    const core::Cell& cell;
    int repetition = 0;
    const kernel::Artifact& kernel;
    std::filesystem::path base_initrd;
    std::filesystem::path dir; // logs and the share live here
    std::string accel;         // kvm or tcg
    vm::Hypervisor& hypervisor;
    const std::atomic<bool>& interrupted;
    std::function<void(const std::string& phase)> on_phase;
    std::function<void()> on_tick; // called on every poll of the guest
};

core::Sample run_sample(const SampleContext& context);

// The kernel command line every rig guest boots with.
std::string guest_cmdline();

// Fills the work share for a sample: the generated project or a copy of the tree.
Expected<void> prepare_share(const core::Workload& workload, const std::filesystem::path& share);

} // namespace rig::run
