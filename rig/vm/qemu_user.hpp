// SPDX-License-Identifier: MIT
// QEMU as an unprivileged user while rig runs as root: what it sees of rig's files, and
// the files handed over to it for one guest's life.
#pragma once

#include "host/account.hpp"
#include "proc/process.hpp"
#include "vm/hypervisor.hpp"

#include <filesystem>
#include <vector>

namespace rig::vm {

// A spec as QEMU sees it from its own mount namespace, and the binds that make it so.
struct SeenSpec {
    GuestSpec spec;
    std::vector<proc::Bind> binds;
};

// `spec` with every path QEMU opens moved under proc::k_bind_root: the runtime folder
// (logs, sockets, the sample's initramfs, work share and disk) as one writable bind, the
// kernel and each share outside that folder as binds of their own, read-only unless the
// share is writable. So the user needs no right on the folders above them (a results
// folder under /root, say), and sees nothing else of rig's.
Expected<SeenSpec> seen_by_user(const GuestSpec& spec);

// Gives `account` what QEMU writes: the runtime folder (mode 0700) with all it holds,
// and writable shares and the scratch disk outside it. Everything else stays rig's.
Expected<void> hand_over(const GuestSpec& spec, const host::Account& account);

// Once the guest is gone: the runtime folder and what it holds belong to rig's user
// again, so that a later guest's QEMU can change nothing of this sample's evidence.
void take_back(const std::filesystem::path& runtime_dir);

} // namespace rig::vm
