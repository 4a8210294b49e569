// SPDX-License-Identifier: MIT
// What moves a watch's results besides the kernel: the host's QEMU and accelerator, rig's
// own version, and the guest root's toolchain and C library (the host's /usr). History is
// compared only within one environment; a change starts a new baseline.
#pragma once

#include "store/store.hpp"
#include "util/error.hpp"

#include <string>

namespace rig::watch {

// "qemu 7.2.22, tcg, rig 0.1.0, gcc 12.2.0, glibc 2.36": of a stored run (its host facts
// and rig version) and of this host's toolchain, which the run's guests saw.
Expected<std::string> environment_of(const store::RunInfo& run);

} // namespace rig::watch
