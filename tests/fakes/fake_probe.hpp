// SPDX-License-Identifier: MIT
// A host Probe for unit tests: fixed facts (a host of 4 CPUs and 8 GiB with QEMU 7.2.22)
// and TCG for every scenario that does not insist on KVM, with no /proc read, no QEMU
// started and no KVM probe booted. It counts what it was asked.
#pragma once

#include "host/probe.hpp"

#include <atomic>

namespace rig::test {

class FakeProbe final : public host::Probe {
public:
    FakeProbe();

    host::Facts facts() override;
    // `answer` for auto, tcg for tcg; kvm only when `answer` is kvm, else an infra error.
    Expected<core::Accelerator> accel(core::Accel requested,
                                      const std::filesystem::path& cache_dir) override;

    host::Facts fixed;                                 // what facts() returns
    core::Accelerator answer = core::Accelerator::tcg; // what KVM gives here
    std::atomic<int> facts_asked{0};
    std::atomic<int> accels_asked{0};
};

} // namespace rig::test
