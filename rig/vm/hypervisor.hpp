// SPDX-License-Identifier: MIT
// The Hypervisor interface: boot a guest from a kernel, an initramfs and shares, and
// watch it. QEMU started directly is one backend; libvirt is another.
#pragma once

#include "core/cpu_set.hpp"
#include "core/fs.hpp"
#include "core/scenario.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rig::vm {

// The filesystem table's (core/fs.hpp) share kinds: a row names the one it needs. A new
// kind is wiring in each backend (qemu.cpp, libvirt.cpp), not a row alone.
using ShareKind = core::ShareKind;

struct Share {
    ShareKind kind = ShareKind::v9p;
    std::string tag;
    std::filesystem::path path;
    bool readonly = false;
    std::string security_model = "none"; // 9p: none, mapped-xattr, passthrough
    std::string virtiofs_cache = "auto"; // virtiofs: auto, always, none
    // virtiofs: virtiofsd logs every request (-d) for counting (virtiofsd_log.hpp). The
    // QEMU backend only: libvirt starts virtiofsd without a way to pass it.
    bool log_requests = false;
};

struct GuestSpec {
    std::string name; // for logs and libvirt domain names
    std::filesystem::path kernel;
    std::filesystem::path initrd;
    std::string cmdline;
    uint64_t memory_mib = 1024;
    int cpus = 2;
    core::Accelerator accel = core::Accelerator::tcg;
    // microvm only where the backend boots it (Hypervisor::boots_microvm) and the kernel
    // can find its devices (guest/initramfs.hpp, kernel_boots_microvm).
    core::Machine machine = core::Machine::q35;
    std::vector<Share> shares;
    std::filesystem::path console_log; // first serial port: the kernel console
    std::filesystem::path channel_log; // second serial port: the agent's records
    std::filesystem::path runtime_dir; // sockets and helper logs
    // Where QEMU writes its 9p trace log (protocol_trace.hpp); empty: no tracing.
    std::filesystem::path protocol_trace;
    // A raw image attached as a virtio-blk disk with serial k_scratch_serial; empty: none.
    std::filesystem::path scratch_disk;
    // The host CPUs the guest and its helpers run on (core/cpu_set.hpp); empty: any.
    core::CpuSet host_cpus;
};

// The serial the scratch disk carries, by which the guest agent finds it among its disks.
inline constexpr const char* k_scratch_serial = "rig-scratch";

struct CpuTimes {
    double vm_seconds = 0;     // the VM process (vCPU and device threads)
    double helper_seconds = 0; // virtiofsd and other helpers
};

class Vm {
public:
    virtual ~Vm() = default;
    // The exit status once the VM is gone (core::VmExit: 0 after poweroff, 1 after pvpanic).
    virtual std::optional<int> poll() = 0;
    virtual CpuTimes cpu_times() = 0;
    // Stops the VM and its helpers now; safe to call more than once.
    virtual void destroy() = 0;
    // Whether a helper (virtiofsd) died while the VM still ran, with a reason.
    virtual std::optional<std::string> helper_failure() = 0;
    // The command line or domain description, kept as evidence.
    virtual std::string describe() const = 0;
};

class Hypervisor {
public:
    virtual ~Hypervisor() = default;
    virtual std::string name() const = 0;
    // Only a guest that could not be started at all is an Error (infra-error outcome).
    virtual Expected<std::unique_ptr<Vm>> start(const GuestSpec& spec) = 0;
    // Whether the endpoint still answers. A backend whose host can drop out (libvirt)
    // says why not; the run layer then retries the host's sample on another host.
    virtual Expected<void> reachable() { return {}; }
    // Whether a virtiofs share's `log_requests` is honoured (virtiofsd started by rig).
    virtual bool logs_virtiofs_requests() const { return false; }
    // Whether it starts a spec's machine as asked; else every guest is q35 (libvirt's domain
    // XML describes a PC).
    virtual bool boots_microvm() const { return false; }
    // Whether its guests' QEMU starts from rig, in rig's mount namespace, and so sees a
    // share rig mounted (run/share_mount.hpp); libvirtd's QEMU does not.
    virtual bool sees_rigs_mounts() const { return false; }
    // Whether the programs that start guests with shares of these kinds are installed.
    // Asked before a run begins, so that a missing one is a clear error, not a run full of
    // infra-error samples. A backend that starts them elsewhere (libvirt) has none to find.
    virtual Expected<void> find_programs(const std::set<ShareKind>&) const { return {}; }
    // The CPUs of the host the guests run on, for --jobs' CPU sets.
    virtual Expected<std::vector<core::HostCpu>> host_cpus() = 0;
};

} // namespace rig::vm
