// SPDX-License-Identifier: MIT
#include "proc/ownership.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace rig::proc {

namespace fs = std::filesystem;

namespace {

Expected<void> give_if_not(const fs::path& path, uid_t uid, gid_t gid) {
    struct stat status {};
    if (::lstat(path.c_str(), &status) == 0 && status.st_uid == uid && status.st_gid == gid)
        return {};
    return give(path, uid, gid);
}

} // namespace

Expected<void> give(const fs::path& path, uid_t uid, gid_t gid) {
    if (::lchown(path.c_str(), uid, gid) != 0)
        return fail(ErrorKind::infra, "cannot give " + path.string() + " to uid " +
                                          std::to_string(uid) + ": " + std::strerror(errno));
    return {};
}

Expected<void> give_all(const fs::path& path, uid_t uid, gid_t gid) {
    RIG_TRY(give_if_not(path, uid, gid));
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(path, ec)))
        return {};
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        RIG_TRY(give_if_not(it->path(), uid, gid));
    if (ec)
        return fail(ErrorKind::infra, "cannot walk " + path.string() + ": " + ec.message());
    return {};
}

} // namespace rig::proc
