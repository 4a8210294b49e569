// SPDX-License-Identifier: MIT
// One sample: boot a guest for a cell, watch it through its phases, and turn what it
// printed into a core::Sample. Panics, hangs and junk become outcomes, not errors.
#pragma once

#include "core/cell.hpp"
#include "core/sample.hpp"
#include "core/scenario.hpp"
#include "guest/root.hpp"
#include "kernel/artifact.hpp"
#include "kernel/module.hpp"
#include "vm/hypervisor.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace rig::run {

// A git kernel that does not build (make failed): no sample of its cells boots a guest.
struct KernelBuildFailure {
    std::string kernel;      // "kernel NAME [fragments] at COMMIT"
    std::string error_lines; // the compiler's first errors
    std::filesystem::path log;
};

struct SampleContext {
    const core::Scenario& scenario;
    const core::Cell& cell;
    int repetition = 0;
    const kernel::Artifact& kernel;
    std::filesystem::path base_initrd;
    std::filesystem::path dir; // logs and the share live here
    core::Accelerator accel = core::Accelerator::tcg;
    vm::Hypervisor& hypervisor;
    const std::atomic<bool>& interrupted;
    std::function<void(const std::string& phase)> on_phase;
    std::function<void()> on_tick; // called on every poll of the guest
    // A module workload's module, built for this kernel; one that did not compile makes
    // the sample build-failed without booting a guest.
    const kernel::ModuleBuild* module = nullptr;
    // The host CPUs the guest runs on under --jobs (core/cpu_set.hpp); empty: any.
    core::CpuSet host_cpus = {};
    // What the guest sees of the host besides the shares the cell names.
    guest::GuestRoot root = {};
    // Set when the cell's kernel did not build: the sample is build-failed without a guest.
    const KernelBuildFailure* kernel_failure = nullptr;
};

// Below this, the filesystem of a sample's folder counts as full: QEMU's logs, the work
// share and the database live there, and a write that fails makes the sample say nothing
// about the cell.
inline constexpr uint64_t k_min_free_bytes = 1 << 20;
// Below this, no sample starts: the run stops as for a folder that filled during one.
inline constexpr uint64_t k_min_start_bytes = 16 << 20;

struct SampleRun {
    core::Sample sample;
    // Set when the sample's folder ran out of space (k_min_free_bytes) at any time of the
    // sample: its outcome is infra-error, its share and initramfs copy are removed to make
    // room for its record, and the caller stops, as every later sample would fail alike.
    std::optional<std::string> out_of_space;
};

// How often a sample's guest is looked at, and how long rig waits on a guest that has
// nothing more to say. The defaults are for real guests; tests shorten them.
struct Pacing {
    // Half a poll is, on average, how late rig sees a guest's exit: it counts in every
    // sample's time. A poll reads two logs' new bytes and asks whether QEMU is gone.
    std::chrono::milliseconds poll{20};
    // A panicked guest without pvpanic never exits: rig stops it once it is this quiet.
    std::chrono::milliseconds panic_quiet{std::chrono::seconds(5)};
    // After the agent's last record the guest only has to power off.
    std::chrono::milliseconds poweroff_grace{std::chrono::seconds(30)};
};

SampleRun run_sample(const SampleContext& context, const Pacing& pacing = {});

// The sample of a cell whose kernel did not build: outcome build-failed, the compiler's
// lines as its error lines (source "build") and its evidence. A failed compile is data
// about the cell's kernel, never an Error, and no guest boots.
core::Sample kernel_build_failed(const core::Cell& cell, int repetition,
                                 const KernelBuildFailure& failure);

} // namespace rig::run
