// SPDX-License-Identifier: MIT
// git bisect in rig's own bare repository, driven through proc/ with argument vectors.
#include "bisect/git.hpp"

#include "kernel/series.hpp"
#include "proc/git.hpp"
#include "util/mail.hpp"
#include "util/strings.hpp"

#include <fstream>
#include <map>
#include <sstream>

namespace rig::bisect {

namespace fs = std::filesystem;

GitState parse_bisect_output(std::string_view output, const std::string& next) {
    GitState state;
    state.output = std::string(output);
    std::vector<std::string> lines = util::split(output, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (auto at = line.find(" is the first bad commit"); at != std::string::npos) {
            state.done = true;
            state.culprit = line.substr(0, at);
            return state;
        }
        if (line.find("The first bad commit could be any of:") != std::string::npos) {
            state.done = true;
            for (size_t j = i + 1; j < lines.size(); ++j) {
                std::string candidate(util::trim(lines[j]));
                if (candidate.empty() || candidate.find(' ') != std::string::npos)
                    break;
                state.candidates.push_back(candidate);
            }
            return state;
        }
    }
    state.next = next;
    return state;
}

Expected<GitBisect> GitBisect::open(const fs::path& dir, const fs::path& repo) {
    GitBisect bisect(fs::absolute(dir), fs::absolute(repo));
    std::string common(util::trim(RIG_TRY(bisect.git({"rev-parse", "--git-common-dir"}, true))));
    fs::path objects = fs::path(common).is_absolute() ? fs::path(common) : bisect.m_repo / common;
    objects = fs::weakly_canonical(objects / "objects");
    if (!fs::exists(bisect.m_dir / "HEAD")) {
        std::error_code ec;
        fs::create_directories(bisect.m_dir, ec);
        if (ec)
            return fail(ErrorKind::infra,
                        "cannot create " + bisect.m_dir.string() + ": " + ec.message());
        RIG_TRY(bisect.git({"init", "--quiet", "--bare", bisect.m_dir.string()}));
    }
    std::ofstream alternates(bisect.m_dir / "objects" / "info" / "alternates", std::ios::trunc);
    alternates << objects.string() << "\n";
    if (!alternates.flush())
        return fail(ErrorKind::infra, "cannot write the alternates of " + bisect.m_dir.string());
    return bisect;
}

Expected<std::unique_ptr<History>> GitBisect::open_history(const fs::path& dir,
                                                           const fs::path& repo) {
    return std::make_unique<GitBisect>(RIG_TRY(open(dir, repo)));
}

Expected<std::string> GitBisect::git(const std::vector<std::string>& args, bool in_repo,
                                     bool allow_failure) const {
    proc::RunOptions options;
    options.cwd = in_repo ? m_repo : m_dir;
    options.timeout = std::chrono::minutes(10);
    auto result = RIG_TRY(proc::run_git(args, options));
    if (result.exit_code != 0 && !allow_failure)
        return fail(ErrorKind::infra,
                    "git " + util::join(args, " ") + " in " + options.cwd.string() +
                        " failed: " + std::string(util::trim(result.err + result.out)));
    return result.out + result.err;
}

Expected<std::string> GitBisect::resolve(const std::string& rev) const {
    RIG_TRY(proc::check_git_operand(rev, "revision"));
    auto out = git({"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"},
                   true, true);
    std::string sha(util::trim(RIG_TRY(std::move(out))));
    if (sha.size() != 40 || sha.find_first_not_of("0123456789abcdef") != std::string::npos)
        return fail(ErrorKind::usage, "'" + rev + "' is not a commit of " + m_repo.string());
    return sha;
}

Expected<size_t> GitBisect::count(const std::string& good, const std::string& bad) const {
    std::string out = RIG_TRY(git({"rev-list", "--count", good + ".." + bad}));
    return std::stoul(std::string(util::trim(out)));
}

Expected<CommitInfo> GitBisect::describe(const std::string& sha) const {
    std::string out = RIG_TRY(git({"show", "-s", "--format=%H%n%s%n%an <%ae>%n%aI", sha, "--"}));
    std::vector<std::string> lines = util::split(out, '\n');
    if (lines.size() < 4)
        return fail(ErrorKind::infra, "git show " + sha + ": unexpected output " + out);
    return CommitInfo{lines[0], lines[1], lines[2], lines[3]};
}

Expected<std::string> GitBisect::parent(const std::string& sha) const {
    std::string out = RIG_TRY(git({"rev-parse", "--verify", sha + "^1"}));
    return std::string(util::trim(out));
}

Expected<GitState> GitBisect::state_after(const std::string& output) const {
    std::string next;
    if (output.find(" is the first bad commit") == std::string::npos &&
        output.find("could be any of") == std::string::npos)
        next = std::string(util::trim(RIG_TRY(git({"rev-parse", "--verify", "BISECT_HEAD"}))));
    return parse_bisect_output(output, next);
}

Expected<GitState> GitBisect::start(const std::string& bad, const std::string& good) {
    RIG_TRY(git({"bisect", "reset"}, false, true));
    // A bare repository's HEAD names a branch that does not exist; bisect wants a commit.
    RIG_TRY(git({"update-ref", "--no-deref", "HEAD", bad}));
    std::string out = RIG_TRY(git({"bisect", "start", "--no-checkout", bad, good}));
    return state_after(out);
}

Expected<GitState> GitBisect::mark(core::Verdict verdict, const std::string& sha) {
    std::string term = verdict == core::Verdict::unsure ? "skip" : std::string(to_string(verdict));
    // git exits 2 when only skipped commits are left: that is an answer, not a failure.
    auto out = RIG_TRY(git({"bisect", term, sha}, false, true));
    if (out.find("fatal:") != std::string::npos || out.find("error:") != std::string::npos)
        return fail(ErrorKind::infra,
                    "git bisect " + term + " " + sha + ": " + std::string(util::trim(out)));
    return state_after(out);
}

Expected<Remaining> GitBisect::remaining() const {
    Remaining out;
    std::vector<std::string> range{"rev-list", "--topo-order", "--parents"};
    for (const std::string& line : util::split(
             RIG_TRY(git({"for-each-ref", "--format=%(refname) %(objectname)", "refs/bisect/"})),
             '\n')) {
        auto space = line.find(' ');
        if (space == std::string::npos)
            continue;
        std::string name = line.substr(0, space), sha = line.substr(space + 1);
        if (name == "refs/bisect/bad")
            out.bad = sha;
        else if (util::starts_with(name, "refs/bisect/good-"))
            range.push_back("^" + sha);
        else if (util::starts_with(name, "refs/bisect/skip-"))
            out.skipped.push_back(sha);
    }
    if (out.bad.empty())
        return fail(ErrorKind::infra, "no bisect in progress in " + m_dir.string());
    range.push_back(out.bad);
    std::map<std::string, size_t> index;
    std::vector<std::vector<std::string>> parents;
    for (const std::string& line : util::split(RIG_TRY(git(range)), '\n')) {
        std::vector<std::string> words = util::split(std::string(util::trim(line)), ' ');
        if (words.empty() || words.front().empty())
            continue;
        index[words.front()] = out.commits.size();
        out.commits.push_back({words.front(), {}});
        parents.emplace_back(words.begin() + 1, words.end());
    }
    for (size_t i = 0; i < out.commits.size(); ++i)
        for (const std::string& parent : parents[i])
            if (auto found = index.find(parent); found != index.end())
                out.commits[i].parents.push_back(found->second);
    return out;
}

Expected<std::string> GitBisect::log() const {
    return git({"bisect", "log"});
}

namespace {

// True when `patch` holds a diff: a "diff --git" line, or a "---" line followed by "+++".
bool has_diff(std::string_view patch) {
    std::string_view previous;
    for (std::string_view line : util::split(patch, '\n')) {
        if (util::starts_with(line, "diff --git ") ||
            (util::starts_with(previous, "--- ") && util::starts_with(line, "+++ ")))
            return true;
        previous = line;
    }
    return false;
}

// `patch` (a diff or a mail) applied to `parent`'s tree with a private index and committed
// on it as `message`, in the bare repository `dir`: nothing is checked out. A mail without
// a diff (a config bisect's switch) keeps the parent's tree, with no index read at all: a
// kernel's is 75,000 files. `env` names the author and committer; `what` begins each error.
Expected<std::string> commit_on(const fs::path& dir, const std::string& parent,
                                const std::string& patch, const std::string& message,
                                std::map<std::string, std::string> env, const std::string& what) {
    const fs::path index = dir / "rig-index";
    const fs::path file = dir / "rig-patch";
    {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << patch;
        if (!out.flush())
            return fail(ErrorKind::infra, "cannot write " + file.string());
    }
    proc::RunOptions options;
    options.cwd = dir;
    options.env = std::move(env);
    options.env["GIT_INDEX_FILE"] = index.string();
    auto step = [&](const std::vector<std::string>& args) -> Expected<std::string> {
        auto result = RIG_TRY(proc::run_git(args, options));
        if (result.exit_code != 0)
            return fail(ErrorKind::infra, what + "git " + util::join(args, " ") + ": " +
                                              std::string(util::trim(result.err)));
        return std::string(util::trim(result.out));
    };
    std::string tree;
    if (has_diff(patch)) {
        RIG_TRY(step({"read-tree", parent}));
        RIG_TRY(step({"apply", "--cached", file.string()}));
        tree = RIG_TRY(step({"write-tree"}));
    } else {
        tree = RIG_TRY(step({"rev-parse", parent + "^{tree}"}));
    }
    std::string commit = RIG_TRY(step({"commit-tree", tree, "-p", parent, "-m", message}));
    std::error_code ec;
    fs::remove(index, ec);
    fs::remove(file, ec);
    return commit;
}

} // namespace

Expected<void> GitBisect::write_revert_patch(const std::string& culprit, const std::string& head,
                                             const fs::path& file) const {
    std::string diff = RIG_TRY(git({"diff", "--binary", culprit, culprit + "^1"}));
    CommitInfo info = RIG_TRY(describe(culprit));
    std::string commit =
        RIG_TRY(commit_on(m_dir, head, diff,
                          "Revert \"" + info.subject + "\"\n\nThis reverts commit " + culprit +
                              " (rig bisect's check).",
                          {{"GIT_AUTHOR_NAME", "rig"},
                           {"GIT_AUTHOR_EMAIL", "rig@localhost"},
                           {"GIT_COMMITTER_NAME", "rig"},
                           {"GIT_COMMITTER_EMAIL", "rig@localhost"}},
                          ""));
    std::string patch = RIG_TRY(git({"format-patch", "-1", "--stdout", commit}));
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << util::trim(patch) << "\n";
    if (!out.flush())
        return fail(ErrorKind::infra, "cannot write " + file.string());
    return {};
}

Expected<std::vector<std::string>>
GitBisect::commit_series(const std::string& base, const std::vector<std::string>& patches) {
    std::vector<std::string> commits;
    std::string parent = base;
    for (size_t i = 0; i < patches.size(); ++i) {
        kernel::SeriesMail mail = kernel::read_mail(patches[i]);
        auto [name, address] = util::parse_mailbox(mail.from);
        parent = RIG_TRY(commit_on(m_dir, parent, patches[i],
                                   mail.title() + (mail.body.empty() ? "" : "\n\n" + mail.body),
                                   {{"GIT_AUTHOR_NAME", name.empty() ? "unknown" : name},
                                    {"GIT_AUTHOR_EMAIL", address},
                                    {"GIT_AUTHOR_DATE", mail.date},
                                    {"GIT_COMMITTER_NAME", "rig"},
                                    {"GIT_COMMITTER_EMAIL", "rig@localhost"},
                                    {"GIT_COMMITTER_DATE", mail.date}},
                                   "patch " + std::to_string(i + 1) + " of the series: "));
        commits.push_back(parent);
    }
    return commits;
}

} // namespace rig::bisect
