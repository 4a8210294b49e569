// SPDX-License-Identifier: MIT
// Outcome classification. The order of the tests is the order of precedence.
#include "core/classify.hpp"

namespace rig::core {

Outcome classify(const SampleFacts& facts) {
    if (facts.interrupted)
        return Outcome::aborted;
    // A full disk on the host fails the guest's writes and QEMU's logs: whatever the
    // guest then did says nothing about the cell.
    if (facts.start_failed || facts.helper_failed || facts.out_of_space)
        return Outcome::infra_error;
    // A panic wins over the timeouts it may have caused, whoever noticed first.
    if (facts.panic_on_console)
        return Outcome::kernel_panic;
    // What the workload did after its writes failed says nothing more.
    if (facts.share_full)
        return Outcome::disk_quota;
    if (facts.boot_timed_out)
        return Outcome::boot_timeout;
    if (facts.workload_timed_out)
        return Outcome::workload_timeout;
    if (facts.silent)
        return Outcome::console_silence;
    if (facts.vm_exit && *facts.vm_exit != exit_code(VmExit::powered_off)) {
        // pvpanic turns a panic into exit status 1; a QEMU that failed before the agent
        // said hello, or died by a signal, is the machinery's failure.
        if (facts.hello && *facts.vm_exit == exit_code(VmExit::panicked))
            return Outcome::kernel_panic;
        return Outcome::infra_error;
    }
    if (facts.setup_failed)
        return Outcome::workload_failed;
    if (!facts.ended)
        return facts.hello ? Outcome::workload_failed : Outcome::infra_error;
    if (facts.workload_exit != 0)
        return Outcome::workload_failed;
    // Wrong data with or without error lines: the lines may be its consequence.
    if (facts.wrong_outputs > 0)
        return Outcome::wrong_output;
    return facts.error_lines > 0 ? Outcome::errors : Outcome::ok;
}

} // namespace rig::core
