// SPDX-License-Identifier: MIT
// The outcome class of a sample, from what the host saw. Pure, so every path is tested.
#pragma once

#include "core/sample.hpp"

#include <optional>

namespace rig::core {

// A VM's exit status, as both hypervisors report it and classify() reads it: QEMU's own
// (pvpanic's panic=exit-failure makes a guest panic exit 1) and libvirt's lifecycle events
// mapped onto the same numbers. Any other status is the machinery's failure too.
enum class VmExit : int {
    powered_off = 0,       // the agent powered the guest off, or it rebooted
    panicked = 1,          // a guest panic (pvpanic), or a crash libvirt saw
    hypervisor_failed = 2, // libvirt: QEMU failed
    stopped_outside = 3,   // libvirt: the domain was stopped from outside rig
};
constexpr int exit_code(VmExit exit) {
    return static_cast<int>(exit);
}

struct SampleFacts {
    bool interrupted = false;        // Ctrl-C or SIGTERM reached rig
    bool start_failed = false;       // the hypervisor could not start the guest
    bool out_of_space = false;       // the sample's folder on the host ran out of space
    bool share_full = false;         // the work share reached its cap (guest.share_limit)
    bool helper_failed = false;      // virtiofsd died under a running guest
    bool boot_timed_out = false;     // no workload start within timeouts.boot
    bool workload_timed_out = false; // no workload end within timeouts.workload
    bool silent = false;             // no output at all for timeouts.silence
    std::optional<int> vm_exit;      // the VM's exit status (VmExit); nullopt when rig stopped it
    bool hello = false;              // the agent ran
    bool setup_failed = false;       // the agent could not mount or prepare
    bool ended = false;              // the agent reported the workload's end
    int workload_exit = 0;
    bool panic_on_console = false; // "Kernel panic" printed
    int error_lines = 0;
    int wrong_outputs = 0; // files whose content is not what it should be (run/outputs.hpp)
};

Outcome classify(const SampleFacts& facts);

} // namespace rig::core
