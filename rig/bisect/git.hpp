// SPDX-License-Identifier: MIT
// git's own bisect machinery in a repository of rig's: a bare repository that borrows the
// user's objects (alternates), bisected with `git bisect --no-checkout`, so merges and
// skips behave as git users expect and the user's checkout is never touched.
#pragma once

#include "bisect/history.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rig::bisect {

// What `git bisect start/good/bad/skip` printed, with the next commit when not done.
GitState parse_bisect_output(std::string_view output, const std::string& next);

class GitBisect final : public History {
public:
    // Creates `dir` (a bare repository whose alternates point at `repo`'s objects) when
    // it does not exist yet. `repo` is the user's repository, never written.
    static Expected<GitBisect> open(const std::filesystem::path& dir,
                                    const std::filesystem::path& repo);
    // The same as Settings::history opens it (OpenHistory).
    static Expected<std::unique_ptr<History>> open_history(const std::filesystem::path& dir,
                                                           const std::filesystem::path& repo);

    // Resolved in the user's repository.
    Expected<std::string> resolve(const std::string& rev) const override;
    Expected<size_t> count(const std::string& good, const std::string& bad) const override;
    Expected<CommitInfo> describe(const std::string& sha) const override;
    Expected<std::string> parent(const std::string& sha) const override;

    Expected<GitState> start(const std::string& bad, const std::string& good) override;
    // `git bisect good|bad|skip SHA`; unsure is told to git as skip.
    Expected<GitState> mark(core::Verdict verdict, const std::string& sha) override;
    // From the bisect's refs and `git rev-list --topo-order --parents`.
    Expected<Remaining> remaining() const override;
    // `git bisect log`: replayable with `git bisect replay` in any clone of the repository.
    Expected<std::string> log() const override;

    // Made in rig's repository with a private index, nothing checked out.
    Expected<void> write_revert_patch(const std::string& culprit, const std::string& head,
                                      const std::filesystem::path& file) const override;
    // Made as the revert is, with rig as committer and each patch's date as the commit's.
    Expected<std::vector<std::string>>
    commit_series(const std::string& base, const std::vector<std::string>& patches) override;

    const std::filesystem::path& dir() const { return m_dir; }

private:
    GitBisect(std::filesystem::path dir, std::filesystem::path repo)
        : m_dir(std::move(dir)), m_repo(std::move(repo)) {}
    Expected<std::string> git(const std::vector<std::string>& args, bool in_repo = false,
                              bool allow_failure = false) const;
    Expected<GitState> state_after(const std::string& output) const;

    std::filesystem::path m_dir;
    std::filesystem::path m_repo;
};

} // namespace rig::bisect
