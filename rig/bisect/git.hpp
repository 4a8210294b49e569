// SPDX-License-Identifier: MIT
// git's own bisect machinery in a repository of rig's: a bare repository that borrows the
// user's objects (alternates), bisected with `git bisect --no-checkout`, so merges and
// skips behave as git users expect and the user's checkout is never touched.
#pragma once

#include "bisect/verdict.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rig::bisect {

// Where git's bisect stands after a command.
struct GitState {
    bool done = false;
    std::string next;                    // the commit to test next, while not done
    std::string culprit;                 // done: the first bad commit, when git named one
    std::vector<std::string> candidates; // done with only skipped commits left: the range
    std::string output;                  // what git printed
};

// What `git bisect start/good/bad/skip` printed, with the next commit when not done.
GitState parse_bisect_output(std::string_view output, const std::string& next);

struct CommitInfo {
    std::string sha;
    std::string subject;
    std::string author; // "Name <email>"
    std::string date;   // author date, ISO 8601
};

class GitBisect final {
public:
    // Creates `dir` (a bare repository whose alternates point at `repo`'s objects) when
    // it does not exist yet. `repo` is the user's repository, never written.
    static Expected<GitBisect> open(const std::filesystem::path& dir,
                                    const std::filesystem::path& repo);

    // The full id of a revision, resolved in the user's repository.
    Expected<std::string> resolve(const std::string& rev) const;
    // Commits in good..bad.
    Expected<size_t> count(const std::string& good, const std::string& bad) const;
    Expected<CommitInfo> describe(const std::string& sha) const;
    // The first parent; an error for a root commit.
    Expected<std::string> parent(const std::string& sha) const;

    // Forgets any bisect in progress and starts one between these commits.
    Expected<GitState> start(const std::string& bad, const std::string& good) const;
    // `git bisect good|bad|skip SHA`; unsure is told to git as skip.
    Expected<GitState> mark(core::Verdict verdict, const std::string& sha) const;
    // `git bisect log`: replayable with `git bisect replay` in any clone of the repository.
    Expected<std::string> log() const;

    // A patch (mbox, for `git am`) that reverts `culprit` on top of `head`, written to
    // `file`; made in rig's repository with a private index, nothing checked out. An error
    // when the revert does not apply cleanly.
    Expected<void> write_revert_patch(const std::string& culprit, const std::string& head,
                                      const std::filesystem::path& file) const;

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
