// SPDX-License-Identifier: MIT
// Whether KVM runs guests on this host, found by booting a tiny one, and the accelerator a
// scenario's guests get here. The one place rig decides between KVM and TCG.
#pragma once

#include "core/scenario.hpp"
#include "proc/process.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::host {

// What this host's KVM does for a guest.
enum class Kvm {
    runs_guests,       // the probe's guest ran to its end under KVM
    no_device,         // no /dev/kvm
    not_read_write,    // /dev/kvm does not open read-write for rig
    cannot_run_guests, // /dev/kvm opens, but the probe's guest failed or hung under KVM
};
// "no /dev/kvm", "/dev/kvm opens but cannot run a guest", ...: for `rig doctor` and errors.
std::string_view describe(Kvm kvm);

// How the probe's boot ended.
enum class ProbeBoot {
    guest_ran,
    guest_failed, // QEMU exited otherwise: no KVM_CREATE_VM, a failed KVM_RUN, ...
    guest_hung,   // killed at k_probe_timeout
};

// The probe's disk: a 512-byte boot sector whose code writes 0x31 to QEMU's isa-debug-exit
// port and halts, so QEMU exits with k_probe_guest_ran.
std::string probe_boot_sector();
inline constexpr int k_probe_guest_ran = (0x31 << 1) | 1;
// Longer than a loaded KVM host needs by far (TCG itself boots it in a fifth of a second):
// a KVM that needs more is no faster than TCG, and a hung KVM_RUN must not stall a run.
inline constexpr std::chrono::seconds k_probe_timeout{3};

// QEMU's argument vector that boots the raw image `disk` under `accel`.
std::vector<std::string> probe_argv(core::Accelerator accel, const std::filesystem::path& disk);

// The guest ran only when QEMU exited with k_probe_guest_ran: a failed KVM_CREATE_VM or
// KVM_RUN exits 1, a hang is killed at the timeout.
ProbeBoot probe_outcome(const proc::RunResult& result);

// Runs QEMU; proc::run, or a test's stand-in.
using QemuRunner = std::function<Expected<proc::RunResult>(const std::vector<std::string>&,
                                                           const proc::RunOptions&)>;

// Writes the boot sector into `folder` and boots it under `accel`. An Error only when the
// disk cannot be written or QEMU cannot be started.
Expected<ProbeBoot> boot_probe_guest(core::Accelerator accel, const std::filesystem::path& folder,
                                     const QemuRunner& run = proc::run);

// The probe's answers are kept per host and host kernel: a host's KVM changes with its
// kernel, and a cache folder may be shared by a cluster's nodes.
std::filesystem::path probe_answer_file(const std::filesystem::path& cache_dir,
                                        const std::string& hostname,
                                        const std::string& kernel_release);
// The same for this host and its running kernel.
std::filesystem::path probe_answer_file(const std::filesystem::path& cache_dir);

// The answer kept in `answer_file` ("kvm" when the guest ran under KVM, "tcg" when not),
// or else a boot under KVM in its folder, whose answer is then kept there. Remove the file
// to probe again. A KVM boot that hangs is kept as "tcg" only when the same guest runs
// under TCG in the time: else the host is too busy to tell, and the next call boots again.
Expected<ProbeBoot> kvm_boot_answer(const std::filesystem::path& answer_file,
                                    const QemuRunner& run = proc::run);

// This host's KVM. Without a usable /dev/kvm nothing boots; otherwise kvm_boot_answer for
// this hostname and kernel release under `cache_dir`.
Expected<Kvm> probe_kvm(const std::filesystem::path& cache_dir, const QemuRunner& run = proc::run);

// The accelerator a scenario's guests get on a host whose KVM is `kvm`: tcg when asked
// for, kvm when asked for or auto and KVM runs guests, else tcg. Asking for kvm where KVM
// does not run guests is an infra error.
Expected<core::Accelerator> choose_accel(core::Accel requested, Kvm kvm);

// The same for this host, booting the probe (through probe_kvm) only when the scenario
// lets KVM in: call it where guests boot, on the host that boots them.
Expected<core::Accelerator> choose_accel(core::Accel requested,
                                         const std::filesystem::path& cache_dir);

} // namespace rig::host
