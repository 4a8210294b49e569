// SPDX-License-Identifier: MIT
// git on the followed kernel's repository, through proc's one git runner.
#include "watch/branch.hpp"

#include "proc/git.hpp"
#include "util/strings.hpp"

namespace rig::watch {

namespace {

std::string trimmed(const std::string& text) {
    return std::string(util::trim(text));
}

} // namespace

Branch::Branch(std::filesystem::path repo, const core::Watch& watch)
    : m_repo(std::move(repo)), m_source(watch.repo), m_branch(watch.branch) {}

std::string Branch::ref() const {
    return (m_source.empty() ? "refs/heads/" : "refs/rig/watch/") + m_branch;
}

Expected<std::string> Branch::git(const std::vector<std::string>& args,
                                  const std::string& what) const {
    std::vector<std::string> argv{"-C", m_repo.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    proc::RunResult result = RIG_TRY(proc::run_git(argv));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, what + " in " + m_repo.string() + " failed: " +
                                          trimmed(result.err.empty() ? result.out : result.err));
    return result.out;
}

Expected<std::string> Branch::fetch_head() const {
    if (!m_source.empty()) {
        RIG_TRY(proc::check_git_operand(m_source, "watch.repo"));
        RIG_TRY(git({"fetch", "--quiet", "--no-tags", "--", m_source,
                     "+refs/heads/" + m_branch + ":" + ref()},
                    "fetching " + m_branch + " from " + m_source));
    }
    return resolve(ref());
}

Expected<std::string> Branch::resolve(const std::string& revision) const {
    RIG_TRY(proc::check_git_operand(revision, "a revision"));
    return trimmed(
        RIG_TRY(git({"rev-parse", "--verify", "--end-of-options", revision + "^{commit}"},
                    "resolving " + revision)));
}

Expected<bool> Branch::is_ancestor(const std::string& ancestor, const std::string& commit) const {
    proc::RunResult result = RIG_TRY(
        proc::run_git({"-C", m_repo.string(), "merge-base", "--is-ancestor", ancestor, commit}));
    if (result.exit_code == 0 || result.exit_code == 1)
        return result.exit_code == 0;
    return fail(ErrorKind::infra, "git merge-base --is-ancestor " + ancestor + " " + commit +
                                      " failed: " + trimmed(result.err));
}

Expected<bool> Branch::touches(const std::string& from, const std::string& to,
                               const std::vector<std::string>& paths) const {
    std::vector<std::string> args{"log", "--format=%H", "-n", "1", from + ".." + to, "--"};
    args.insert(args.end(), paths.begin(), paths.end());
    return !trimmed(RIG_TRY(git(args, "listing " + from + ".." + to))).empty();
}

Expected<Commit> Branch::describe(const std::string& commit) const {
    std::vector<std::string> lines =
        util::split(trimmed(RIG_TRY(git({"show", "-s", "--format=%H%n%an <%ae>%n%s", commit},
                                        "describing " + commit))),
                    '\n');
    if (lines.size() < 3)
        return fail(ErrorKind::infra, "git show " + commit + " printed too little");
    return Commit{lines[0], lines[2], lines[1]};
}

Expected<std::vector<std::string>> Branch::changed_files(const std::string& commit) const {
    std::string out =
        RIG_TRY(git({"diff-tree", "--no-commit-id", "--name-only", "-r", "--root", commit},
                    "listing the files of " + commit));
    std::vector<std::string> files;
    for (std::string& line : util::split(trimmed(out), '\n'))
        if (!line.empty())
            files.push_back(std::move(line));
    return files;
}

} // namespace rig::watch
