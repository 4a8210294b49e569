// SPDX-License-Identifier: MIT
#include "kernel/confine.hpp"

#include "proc/ownership.hpp"

namespace rig::kernel {

namespace fs = std::filesystem;

ConfinedTree::ConfinedTree(const BuildSettings& settings, const fs::path& src, const fs::path& out)
    : m_real_src(fs::absolute(src).lexically_normal()),
      m_real_out(fs::absolute(out).lexically_normal()) {
    m_confinement.user = settings.make_user;
    m_confinement.no_network = true;
    // gcc's temporary files: /tmp is a tmpfs of make's own when the binds cover it.
    m_confinement.writable_bind_root = true;
    m_src = see(src, "src", true);
    m_out = see(out, "out", false);
}

fs::path ConfinedTree::see(const fs::path& folder, const std::string& name, bool readonly) {
    fs::path real = fs::absolute(folder).lexically_normal();
    if (!readonly)
        m_writable.push_back(real);
    if (!m_confinement.user)
        return real;
    fs::path seen = fs::path(proc::k_bind_root) / name;
    m_confinement.binds.push_back({real, seen, readonly});
    return seen;
}

fs::path ConfinedTree::writable(const fs::path& folder, const std::string& name) {
    return see(folder, name, false);
}

Expected<void> ConfinedTree::hand_over() const {
    if (!m_confinement.user)
        return {};
    for (const fs::path& folder : m_writable) {
        std::error_code ec;
        fs::create_directories(folder, ec);
        RIG_TRY(proc::give_all(folder, m_confinement.user->uid, m_confinement.user->gid));
    }
    return {};
}

} // namespace rig::kernel
