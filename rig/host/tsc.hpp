// SPDX-License-Identifier: MIT
// The host's TSC rate, which a TCG guest's TSC runs at (QEMU reads the host's counter).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rig::host {

// The host's TSC in kHz, measured once against CLOCK_MONOTONIC_RAW; nullopt off x86-64 or
// where the TSC does not tick at a constant rate through power states (constant_tsc and
// nonstop_tsc in /proc/cpuinfo's flags). A microvm guest under TCG has no HPET or ACPI PM timer
// to calibrate its TSC against, and a failed PIT calibration on a loaded host leaves it
// without a clock: told the rate (tsc_early_khz), it needs none.
std::optional<uint64_t> tsc_khz();

// Whether `cpuinfo` (as /proc/cpuinfo reads) says the TSC is constant and nonstop.
bool steady_tsc(const std::string& cpuinfo);

} // namespace rig::host
