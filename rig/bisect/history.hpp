// SPDX-License-Identifier: MIT
// What the bisect driver and its report ask of a kernel's history: revisions resolved,
// ranges counted, commits described, and a bisect between two commits carried step by
// step. A seam: the real one is git's own bisect (bisect/git.hpp), unit tests hand in a
// history held in memory.
#pragma once

#include "core/status.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rig::bisect {

// Where the bisect stands after a command.
struct GitState {
    bool done = false;
    std::string next;                    // the commit to test next, while not done
    std::string culprit;                 // done: the first bad commit, when one was named
    std::vector<std::string> candidates; // done with only skipped commits left: the range
    std::string output;                  // what the history printed
};

// What the bisect has left, for choosing several commits to test at once: the commits
// the first bad one may still be (the last one known bad among them), each with its
// parents among them, children before parents; and which of them were skipped.
struct Remaining {
    struct Commit {
        std::string sha;
        std::vector<size_t> parents; // indexes into `commits`
    };
    std::vector<Commit> commits;
    std::string bad;                  // the last commit known bad
    std::vector<std::string> skipped; // among `commits`
};

struct CommitInfo {
    std::string sha;
    std::string subject;
    std::string author; // "Name <email>"
    std::string date;   // author date, ISO 8601
};

class History {
public:
    virtual ~History() = default;

    // The full id of a revision; a usage error when it names no commit.
    virtual Expected<std::string> resolve(const std::string& rev) const = 0;
    // Commits in good..bad.
    virtual Expected<size_t> count(const std::string& good, const std::string& bad) const = 0;
    virtual Expected<CommitInfo> describe(const std::string& sha) const = 0;
    // The first parent; an error for a root commit.
    virtual Expected<std::string> parent(const std::string& sha) const = 0;

    // Forgets any bisect in progress and starts one between these commits.
    virtual Expected<GitState> start(const std::string& bad, const std::string& good) = 0;
    // Tells the bisect `sha`'s verdict; unsure counts as skip.
    virtual Expected<GitState> mark(core::Verdict verdict, const std::string& sha) = 0;
    // What the bisect in progress has left (above).
    virtual Expected<Remaining> remaining() const = 0;
    // The bisect so far as `git bisect log` prints it.
    virtual Expected<std::string> log() const = 0;

    // A patch (mbox, for `git am`) that reverts `culprit` on top of `head`, written to
    // `file`. An error when the revert does not apply cleanly.
    virtual Expected<void> write_revert_patch(const std::string& culprit, const std::string& head,
                                              const std::filesystem::path& file) const = 0;

    // A posted series made into commits on `base`, one per patch (mbox texts, in order),
    // each with its patch's author, date and message: a series bisected as a history. The
    // same patches on the same base give the same commits, so a resumed bisect finds them.
    virtual Expected<std::vector<std::string>>
    commit_series(const std::string& base, const std::vector<std::string>& patches) = 0;
};

// Opens the history of the user's repository `repo`, bisected in `dir`, a folder of rig's
// (created when missing); `repo` is never written.
using OpenHistory = std::function<Expected<std::unique_ptr<History>>(
    const std::filesystem::path& dir, const std::filesystem::path& repo)>;

} // namespace rig::bisect
