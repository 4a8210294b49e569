// SPDX-License-Identifier: MIT
// The per-kernel base initramfs: static busybox, the agent (guests/init) and the module
// closure, cached by the hash of everything that goes into it.
#pragma once

#include "core/fs.hpp"
#include "kernel/artifact.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rig::guest {

// Modules a guest of a cell on `fs` loads when the kernel has them as modules: virtio's
// transport on `machine` (PCI on q35, MMIO on microvm), 9p for the root share, the cell's
// filesystem, and pvpanic so that a panic reaches QEMU. Loading only these matters: each
// insmod costs tens of milliseconds under TCG.
struct ModuleSet {
    std::vector<std::string> required;
    std::vector<std::string> optional;
};
ModuleSet guest_modules(const core::Filesystem& fs, core::Machine machine);

// The load order file in the base archive for cells on `fs` on `machine`.
std::string module_list_path(const core::Filesystem& fs, core::Machine machine);

// Whether a guest of this kernel finds microvm's devices: virtio-mmio (built in or a
// module) and ACPI to list them. Debian's kernels have both; rig's git kernels have no ACPI
// (kernels/base.config) and an `image:` kernel's config is unknown, so those boot q35.
bool kernel_boots_microvm(const kernel::Artifact& kernel);

// What a guest with a scratch disk loads after its filesystem's list (virtio_blk), and
// the load order file in the base archive that lists it.
const ModuleSet& scratch_modules();
inline constexpr std::string_view k_scratch_module_list = "/etc/rig/modules-scratch";

// The agent script rig carries inside its binary (from guests/init).
std::string_view agent_script();

// Returns the cached archive for this kernel, building it on first use.
Expected<std::filesystem::path> base_initramfs(const kernel::Artifact& kernel,
                                               const std::filesystem::path& cache);

// base + job archive, concatenated: the kernel unpacks both, the job's files last.
Expected<void> write_sample_initrd(const std::filesystem::path& base, const std::string& job_cpio,
                                   const std::filesystem::path& out);

} // namespace rig::guest
