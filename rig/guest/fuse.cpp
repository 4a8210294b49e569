// SPDX-License-Identifier: MIT
// rig-fuse's options and location.
#include "guest/fuse.hpp"

#include <unistd.h>

namespace rig::guest {

namespace fs = std::filesystem;

std::vector<std::string> fuse_arguments(const core::Cell& cell) {
    // Axis name -> option; booleans are flags that only appear when true.
    static const std::pair<const char*, const char*> k_timeouts[] = {
        {"entry_timeout", "--entry-timeout"},
        {"attr_timeout", "--attr-timeout"},
        {"negative_timeout", "--negative-timeout"}};
    static const std::pair<const char*, const char*> k_flags[] = {
        {"keep_cache", "--keep-cache"},
        {"writeback_cache", "--writeback-cache"},
        {"direct_io", "--direct-io"}};
    std::vector<std::string> args;
    for (const auto& [axis, option] : k_timeouts) {
        std::string value = cell.param(axis);
        if (!value.empty()) {
            args.emplace_back(option);
            args.push_back(value);
        }
    }
    for (const auto& [axis, option] : k_flags)
        if (cell.param(axis) == "true")
            args.emplace_back(option);
    return args;
}

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
