// SPDX-License-Identifier: MIT
// Local user accounts, looked up safely from any thread (guests of --jobs start at once).
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

namespace rig::host {

struct Account {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
};

// The account called `name`, from the passwd database (getpwnam_r, not getpwnam, whose
// one static entry another thread may be filling).
std::optional<Account> find_account(const std::string& name);

// The account a local privileged libvirtd runs QEMU as: libvirt-qemu on Debian, qemu
// elsewhere; nullopt when neither exists.
std::optional<Account> libvirt_qemu_account();

} // namespace rig::host
