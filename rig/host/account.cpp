// SPDX-License-Identifier: MIT
#include "host/account.hpp"

#include <pwd.h>
#include <unistd.h>
#include <vector>

namespace rig::host {

std::optional<Account> find_account(const std::string& name) {
    long suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buffer(suggested > 0 ? static_cast<size_t>(suggested) : 16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    if (::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
        return std::nullopt;
    return Account{name, found->pw_uid, found->pw_gid};
}

std::optional<Account> libvirt_qemu_account() {
    for (const char* name : {"libvirt-qemu", "qemu"})
        if (auto account = find_account(name))
            return account;
    return std::nullopt;
}

} // namespace rig::host
