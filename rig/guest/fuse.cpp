// SPDX-License-Identifier: MIT
// rig-fuse's location.
#include "guest/fuse.hpp"

#include <unistd.h>

namespace rig::guest {

namespace fs = std::filesystem;

Expected<fs::path> find_fuse_daemon() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot read /proc/self/exe: " + ec.message());
    fs::path dir = self.parent_path();
    // The layouts guests/meson.build and rig/cli/meson.build produce.
    for (const fs::path& candidate :
         {dir / ".." / ".." / "guests" / "rig-fuse", dir / ".." / "libexec" / "rig" / "rig-fuse"}) {
        fs::path resolved = fs::weakly_canonical(candidate, ec);
        if (!ec && fs::is_regular_file(resolved, ec) && ::access(resolved.c_str(), X_OK) == 0)
            return resolved;
    }
    return fail(ErrorKind::infra, "rig-fuse not found next to " + self.string() +
                                      " (guests/rig-fuse in the build tree, or "
                                      "../libexec/rig/rig-fuse when installed)");
}

} // namespace rig::guest
