// SPDX-License-Identifier: MIT
// Local user accounts, looked up safely from any thread (guests of --jobs start at once).
#pragma once

#include "proc/process.hpp"
#include "util/error.hpp"

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace rig::host {

struct Account {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups; // every group it is in, its own among them
};

// The account called `name`, from the passwd database (getpwnam_r, not getpwnam, whose
// one static entry another thread may be filling).
std::optional<Account> find_account(const std::string& name);

// The account a local privileged libvirtd runs QEMU as: libvirt-qemu on Debian, qemu
// elsewhere; nullopt when neither exists.
std::optional<Account> libvirt_qemu_account();

// The account rig runs QEMU as when it runs as root: a system user of its own
// (scripts/install-deps creates it, in group kvm), never root.
inline constexpr const char* k_qemu_account = "rig-qemu";

// rig's own user's QEMU runs as rig: nullopt. As root, the k_qemu_account account, or an
// error that says how to create it.
Expected<std::optional<Account>> qemu_account();

// Who `account` is to a spawned child.
proc::Credentials credentials(const Account& account);

// Whom the code rig did not write runs as (a git kernel tree's Makefiles; QEMU and the
// guest's kernel have their own spawns): the qemu_account() user when rig is root, rig's
// own user (nullopt) otherwise.
Expected<std::optional<proc::Credentials>> untrusted_user();

} // namespace rig::host
