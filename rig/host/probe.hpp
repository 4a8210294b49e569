// SPDX-License-Identifier: MIT
// What the run loop and the bisect ask of the host guests boot on: its facts, recorded with
// a run, and the accelerator a scenario's guests get there. A seam, asked once per run:
// unit tests hand in a fake that reads no /proc, starts no QEMU and boots no KVM probe.
#pragma once

#include "core/scenario.hpp"
#include "host/facts.hpp"
#include "util/error.hpp"

#include <filesystem>

namespace rig::host {

class Probe {
public:
    virtual ~Probe() = default;
    // Hostname, kernel, CPUs, memory and QEMU's version; accel is left unset.
    virtual Facts facts() = 0;
    // The accelerator of a scenario that asks for `requested` (choose_accel), the KVM
    // probe's answer kept under `cache_dir`.
    virtual Expected<core::Accelerator> accel(core::Accel requested,
                                              const std::filesystem::path& cache_dir) = 0;
};

// This host: probe() and choose_accel, which boots the KVM probe when the answer is not
// kept yet and the scenario lets KVM in. Safe from any thread.
Probe& local_probe();

} // namespace rig::host
