// SPDX-License-Identifier: MIT
// rig-fuse's location.
#include "guest/fuse.hpp"

#include "rig_config.hpp"
#include "util/strings.hpp"

#include <unistd.h>

namespace rig::guest {

namespace fs = std::filesystem;

std::vector<fs::path> fuse_daemon_places(const fs::path& self) {
    fs::path dir = self.parent_path();
    fs::path libexec = fs::path(RIG_LIBEXEC_DIR);
    // The layouts guests/meson.build and rig/cli/meson.build produce.
    return {dir / ".." / ".." / "guests" / "rig-fuse",
            dir / libexec.lexically_relative(RIG_BIN_DIR) / "rig-fuse", libexec / "rig-fuse"};
}

Expected<fs::path> find_fuse_daemon() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot read /proc/self/exe: " + ec.message());
    std::vector<std::string> looked;
    for (const fs::path& candidate : fuse_daemon_places(self)) {
        fs::path resolved = fs::weakly_canonical(candidate, ec);
        if (!ec && fs::is_regular_file(resolved, ec) && ::access(resolved.c_str(), X_OK) == 0)
            return resolved;
        looked.push_back(candidate.lexically_normal().string());
    }
    return fail(ErrorKind::infra, "rig-fuse not found (looked at " + util::join(looked, ", ") +
                                      "): reinstall rig, or build it with rig in the build tree");
}

} // namespace rig::guest
