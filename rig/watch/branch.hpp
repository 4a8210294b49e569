// SPDX-License-Identifier: MIT
// The watched branch as git sees it, in the followed kernel's repository: fetched under a
// ref of rig's own, its head, and what its new commits touch.
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rig::watch {

struct Commit {
    std::string sha;
    std::string subject;
    std::string author; // "Name <address>"
};

class Branch {
public:
    // `repo` is the followed kernel entry's repository (absolute).
    Branch(std::filesystem::path repo, const core::Watch& watch);

    // The ref heads are read from: refs/rig/watch/BRANCH when the watch fetches from a
    // repo of its own, else refs/heads/BRANCH of `repo`.
    std::string ref() const;
    // Fetches the branch (when the watch names a repo; a forced update, so that a
    // force-push is followed) and returns its head.
    Expected<std::string> fetch_head() const;
    Expected<bool> is_ancestor(const std::string& ancestor, const std::string& commit) const;
    // Whether the commits of from..to touch one of `paths`.
    Expected<bool> touches(const std::string& from, const std::string& to,
                           const std::vector<std::string>& paths) const;
    Expected<Commit> describe(const std::string& commit) const;
    // A revision (a tag) as a full commit id.
    Expected<std::string> resolve(const std::string& revision) const;
    // The files `commit` changes against its first parent.
    Expected<std::vector<std::string>> changed_files(const std::string& commit) const;
    const std::filesystem::path& repo() const { return m_repo; }

private:
    Expected<std::string> git(const std::vector<std::string>& args, const std::string& what) const;

    std::filesystem::path m_repo;
    std::string m_source; // "" = the repository itself
    std::string m_branch;
};

} // namespace rig::watch
