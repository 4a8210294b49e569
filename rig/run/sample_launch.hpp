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

// The kernel command line every rig guest boots with.
std::string guest_cmdline();

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
