// SPDX-License-Identifier: MIT
// The fake host probe.
#include "fake_probe.hpp"

namespace rig::test {

FakeProbe::FakeProbe() {
    fixed.hostname = "fake-host";
    fixed.kernel_release = "6.1.0-fake";
    fixed.cpus = 4;
    fixed.memory_mib = 8192;
    fixed.qemu_version = "7.2.22";
}

host::Facts FakeProbe::facts() {
    ++facts_asked;
    return fixed;
}

Expected<core::Accelerator> FakeProbe::accel(core::Accel requested, const std::filesystem::path&) {
    ++accels_asked;
    switch (requested) {
    case core::Accel::tcg:
        return core::Accelerator::tcg;
    case core::Accel::auto_detect:
        return answer;
    case core::Accel::kvm:
        break;
    }
    if (answer != core::Accelerator::kvm)
        return fail(ErrorKind::infra, "guest.accel is kvm but the fake host has no KVM");
    return core::Accelerator::kvm;
}

} // namespace rig::test
