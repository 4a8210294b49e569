// SPDX-License-Identifier: MIT
// Facts about the machine rig runs on: accelerator, QEMU, CPUs, memory. Recorded per run.
#pragma once

#include "core/scenario.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace rig::host {

struct Facts {
    std::string hostname;
    std::string kernel_release;
    int cpus = 0;
    uint64_t memory_mib = 0;
    std::string qemu_version; // "7.2.22", or "" when QEMU is missing
    // The accelerator guests booted here get (host/kvm_probe.hpp), set by the caller that
    // chose it; unset where no guest boots (a Slurm coordinator) and then not recorded.
    std::optional<core::Accelerator> accel;
    std::string to_json() const;
};

Facts probe();

// The virtiofsd binary: the C daemon QEMU 7.2 ships, or a packaged Rust one, looked for
// at k_virtiofsd_paths, then in PATH.
std::optional<std::filesystem::path> find_virtiofsd();
inline constexpr std::array<const char*, 2> k_virtiofsd_paths{"/usr/libexec/virtiofsd",
                                                              "/usr/lib/qemu/virtiofsd"};
// Where find_virtiofsd looked, for a message that says it found nothing.
std::string virtiofsd_places();

// "QEMU emulator version 7.2.22 (...)" -> "7.2.22".
std::string parse_qemu_version(const std::string& version_output);

} // namespace rig::host
