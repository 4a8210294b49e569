// SPDX-License-Identifier: MIT
#include "host/account.hpp"

#include <grp.h>
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
    Account account{name, found->pw_uid, found->pw_gid, {}};
    int count = 16;
    for (int attempt = 0; attempt < 4; ++attempt) {
        account.groups.resize(static_cast<size_t>(count));
        if (::getgrouplist(name.c_str(), account.gid, account.groups.data(), &count) >= 0) {
            account.groups.resize(static_cast<size_t>(count));
            return account;
        }
    }
    account.groups = {account.gid};
    return account;
}

std::optional<Account> libvirt_qemu_account() {
    for (const char* name : {"libvirt-qemu", "qemu"})
        if (auto account = find_account(name))
            return account;
    return std::nullopt;
}

Expected<std::optional<Account>> qemu_account() {
    if (::geteuid() != 0)
        return std::optional<Account>();
    auto account = find_account(k_qemu_account);
    if (!account)
        return fail(ErrorKind::infra,
                    std::string("rig runs as root but there is no user ") + k_qemu_account +
                        " to run QEMU as: run scripts/install-deps, or create it with "
                        "`adduser --system --group --no-create-home " +
                        k_qemu_account + "` (README, \"Security\")");
    if (account->uid == 0)
        return fail(ErrorKind::infra, std::string("the user ") + k_qemu_account +
                                          " is root: QEMU must not run as root");
    return account;
}

proc::Credentials credentials(const Account& account) {
    return {account.uid, account.gid, account.groups};
}

Expected<std::optional<proc::Credentials>> untrusted_user() {
    auto account = RIG_TRY(qemu_account());
    if (!account)
        return std::optional<proc::Credentials>();
    return std::optional<proc::Credentials>(credentials(*account));
}

} // namespace rig::host
