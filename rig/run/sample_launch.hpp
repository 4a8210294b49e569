// SPDX-License-Identifier: MIT
// Everything before a sample's guest boots: work share, job initramfs, scratch disk, spec.
#pragma once

#include "core/scenario.hpp"
#include "run/sample.hpp"
#include "util/error.hpp"
#include "vm/hypervisor.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace rig::run {

// The kernel command line a rig guest boots with on `machine` under `accel`.
std::string guest_cmdline(core::Machine machine, core::Accelerator accel);

// The machine a sample's guest boots on: microvm where the scenario does not pin q35 and
// has only Debian kernels, the backend boots it and the kernel finds its devices, and under TCG
// only where the host's TSC rate is known (host/tsc.hpp); else q35.
core::Machine machine_for(const SampleContext& context);

// A sparse file of `bytes` at `file`, replacing any: the sample's scratch disk.
Expected<void> make_scratch_disk(const std::filesystem::path& file, uint64_t bytes);

// Fills the work share for a sample: the generated project or a copy of the tree.
Expected<void> prepare_share(const core::Workload& workload, const std::filesystem::path& share);

// Where the host counts a sample's requests: QEMU's 9p trace, and virtiofsd's log of a
// virtiofs work share run with log_requests.
struct CountSources {
    std::filesystem::path trace;
    std::filesystem::path virtiofsd_log;
};

// The guest to boot, and where the host will count its requests.
struct Launch {
    vm::GuestSpec spec;
    CountSources counted;
    // The coherency probe's acknowledgements (the share k_ack_tag); empty when there is none.
    std::filesystem::path acks;
};

// The share filled, the job's initramfs written and the guest described, in context.dir.
Expected<Launch> prepare_launch(const SampleContext& context, const std::filesystem::path& share);

} // namespace rig::run
