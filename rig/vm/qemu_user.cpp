// SPDX-License-Identifier: MIT
#include "vm/qemu_user.hpp"

#include "proc/ownership.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace rig::vm {

namespace fs = std::filesystem;

namespace {

// `path` relative to `folder`, or empty when it lies outside.
fs::path inside(const fs::path& path, const fs::path& folder) {
    fs::path relative = path.lexically_normal().lexically_relative(folder.lexically_normal());
    if (relative.empty() || *relative.begin() == "..")
        return {};
    return relative;
}

class Binder {
public:
    explicit Binder(const fs::path& runtime_dir) : m_runtime(fs::absolute(runtime_dir)) {
        m_binds.push_back({m_runtime, m_seen_runtime, false});
    }

    // Where QEMU sees `path`: in the runtime folder's bind, or in a bind of its own.
    fs::path see(const fs::path& path, const std::string& name, bool readonly) {
        if (path.empty())
            return path;
        fs::path absolute = fs::absolute(path);
        if (absolute == m_runtime)
            return m_seen_runtime;
        if (fs::path relative = inside(absolute, m_runtime); !relative.empty())
            return m_seen_runtime / relative;
        fs::path target = fs::path(proc::k_bind_root) / name;
        m_binds.push_back({absolute, target, readonly});
        return target;
    }

    // A file QEMU creates must lie in the runtime folder: a bind needs what it binds.
    Expected<fs::path> see_new(const fs::path& path) {
        if (path.empty())
            return path;
        fs::path relative = inside(fs::absolute(path), m_runtime);
        if (relative.empty())
            return fail(ErrorKind::infra, path.string() + " is not in the guest's runtime folder " +
                                              m_runtime.string());
        return m_seen_runtime / relative;
    }

    std::vector<proc::Bind> binds() && { return std::move(m_binds); }

private:
    fs::path m_runtime;
    fs::path m_seen_runtime = fs::path(proc::k_bind_root) / "run";
    std::vector<proc::Bind> m_binds;
};

} // namespace

Expected<SeenSpec> seen_by_user(const GuestSpec& spec) {
    SeenSpec seen{spec, {}};
    Binder binder(spec.runtime_dir);
    GuestSpec& out = seen.spec;
    out.runtime_dir = binder.see(spec.runtime_dir, "run", false);
    out.kernel = binder.see(spec.kernel, "kernel", true);
    out.initrd = binder.see(spec.initrd, "initrd", true);
    out.scratch_disk = binder.see(spec.scratch_disk, "scratch", false);
    for (size_t i = 0; i < out.shares.size(); ++i) {
        Share& share = out.shares[i];
        if (share.kind == ShareKind::v9p)
            share.path = binder.see(share.path, "share" + std::to_string(i), share.readonly);
    }
    out.console_log = RIG_TRY(binder.see_new(spec.console_log));
    out.channel_log = RIG_TRY(binder.see_new(spec.channel_log));
    out.protocol_trace = RIG_TRY(binder.see_new(spec.protocol_trace));
    seen.binds = std::move(binder).binds();
    return seen;
}

Expected<void> hand_over(const GuestSpec& spec, const host::Account& account) {
    RIG_TRY(proc::give_all(spec.runtime_dir, account.uid, account.gid));
    if (::chmod(spec.runtime_dir.c_str(), 0700) != 0)
        return fail(ErrorKind::infra,
                    "cannot close " + spec.runtime_dir.string() + ": " + std::strerror(errno));
    fs::path runtime = fs::absolute(spec.runtime_dir);
    for (const Share& share : spec.shares)
        if (share.kind == ShareKind::v9p && !share.readonly &&
            inside(fs::absolute(share.path), runtime).empty())
            RIG_TRY(proc::give_all(share.path, account.uid, account.gid));
    if (!spec.scratch_disk.empty() && inside(fs::absolute(spec.scratch_disk), runtime).empty())
        RIG_TRY(proc::give(spec.scratch_disk, account.uid, account.gid));
    return {};
}

void take_back(const fs::path& runtime_dir) {
    // Best effort: a file left to the user changes no result, and the guest is gone.
    (void)proc::give_all(runtime_dir, ::geteuid(), ::getegid());
    ::chmod(runtime_dir.c_str(), 0755);
}

} // namespace rig::vm
