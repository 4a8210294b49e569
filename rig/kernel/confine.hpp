// SPDX-License-Identifier: MIT
// Internal to kernel/: a git tree's Makefiles, Kconfig and host programs are code rig did
// not write (a watched branch, a posted series), so every make on such a tree runs
// confined: without a network, and, when rig runs as root, as the unprivileged user
// (BuildSettings::make_user), seeing its source read-only and writing only its build
// folder, ccache's folder and what the step makes.
#pragma once

#include "kernel/build.hpp"
#include "proc/process.hpp"

#include <filesystem>
#include <string>

namespace rig::kernel {

class ConfinedTree final {
public:
    // With a user, make sees the source at /tmp/src and the build folder at /tmp/out in a
    // mount namespace of its own: the same paths for every build, so the command lines a
    // build folder records (and ccache hashes) do not depend on where the cache lies.
    // Without one (rig runs as a normal user), both keep their own paths.
    ConfinedTree(const BuildSettings& settings, const std::filesystem::path& src,
                 const std::filesystem::path& out);

    // As make sees them.
    const std::filesystem::path& src() const { return m_src; }
    const std::filesystem::path& out() const { return m_out; }
    // As rig sees them.
    const std::filesystem::path& real_src() const { return m_real_src; }
    const std::filesystem::path& real_out() const { return m_real_out; }

    // Another folder make writes (ccache's, modules_install's staging, a module's source),
    // as make sees it; `name` is its place under /tmp.
    std::filesystem::path writable(const std::filesystem::path& folder, const std::string& name);

    // The writable folders belong to the user from now on (nothing to do without one).
    Expected<void> hand_over() const;

    const proc::Confinement& confinement() const { return m_confinement; }

private:
    std::filesystem::path see(const std::filesystem::path& folder, const std::string& name,
                              bool readonly);

    proc::Confinement m_confinement;
    std::vector<std::filesystem::path> m_writable; // real paths
    std::filesystem::path m_real_src;
    std::filesystem::path m_real_out;
    std::filesystem::path m_src;
    std::filesystem::path m_out;
};

} // namespace rig::kernel
