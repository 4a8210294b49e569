// SPDX-License-Identifier: MIT
// A git request resolved to its commit and cache key; rig's clone checked out and patched.
#include "kernel/checkout.hpp"

#include "proc/git.hpp"
#include "proc/holders.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <ctime>

namespace rig::kernel {

namespace fs = std::filesystem;

namespace {

// Bump when the recipe changes what a build produces, so old artifacts are not reused.
constexpr std::string_view k_recipe = "rig git kernel recipe 1";

std::string utc_stamp() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &tm);
    return text;
}

Expected<std::string> git_output(const std::vector<std::string>& args, const fs::path& repo,
                                 ErrorKind kind, const std::string& what) {
    std::vector<std::string> argv{"-C", repo.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    proc::RunOptions options;
    options.timeout = std::chrono::minutes(5);
    auto result = RIG_TRY(proc::run_git(argv, options));
    if (result.exit_code != 0)
        return fail(kind, what + (result.err.empty() ? "" : ": " + tail(result.err, 500)));
    return std::string(util::trim(result.out));
}

} // namespace

Expected<void> clear_stale_index_lock(const fs::path& work_tree, Builder& builder) {
    const fs::path lock = work_tree / ".git" / "index.lock";
    std::error_code ec;
    if (!fs::exists(lock, ec))
        return {};
    // Either sign of a live owner is enough: git closes the lock's descriptor before it
    // renames the file into place (and before it runs hooks), so a live git may have it
    // closed; but git works from its work tree's top level before it takes the lock, so a
    // git whose folder is in the clone is seen by that. Any other process with the file
    // open is seen by its descriptor.
    std::vector<proc::ProcessRef> holders = proc::processes_with_open(lock);
    for (const proc::ProcessRef& git : proc::processes_working_in(work_tree, "git"))
        if (std::find(holders.begin(), holders.end(), git) == holders.end())
            holders.push_back(git);
    if (!holders.empty())
        return fail(ErrorKind::infra, lock.string() + " is in use by " + proc::describe(holders) +
                                          ": a git works in rig's clone; let it finish, or "
                                          "stop it, and build again");
    fs::remove(lock, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot remove " + lock.string() + ": " + ec.message());
    builder.log("rig: removed " + lock.string() +
                ", which no process holds: a git killed with an earlier rig left it");
    return {};
}

Expected<std::string> resolve_commit(const fs::path& repo, const std::string& ref) {
    // The scenario refused these already; a stored run's or a bisect's come back here.
    RIG_TRY(proc::check_git_operand(repo.string(), "kernel repository"));
    RIG_TRY(proc::check_git_operand(ref, "git ref"));
    if (!fs::is_directory(repo))
        return fail(ErrorKind::config, "kernel repository " + repo.string() + " does not exist");
    RIG_TRY(git_output({"rev-parse", "--git-dir"}, repo, ErrorKind::config,
                       repo.string() + " is not a git repository"));
    return git_output({"rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"},
                      repo, ErrorKind::config,
                      "ref '" + ref + "' is not a commit in " + repo.string());
}

Expected<Resolved> resolve(const GitRequest& request) {
    Resolved resolved;
    resolved.commit = RIG_TRY(resolve_commit(request.repo, request.ref));

    std::vector<Fragment> fragments;
    for (const std::string& name : request.fragments) {
        std::string text = RIG_TRY(fragment_text(name, request.fragment_dirs));
        fragments.push_back({name, std::move(text)});
    }
    resolved.config = compose(fragments, request.options);
    resolved.config_hash = util::sha256_hex(resolved.config.text).substr(0, 16);
    resolved.compiler = RIG_TRY(first_line_of({"gcc", "--version"}));

    std::string key_text = std::string(k_recipe) + "\ncommit=" + resolved.commit +
                           "\nconfig=" + resolved.config_hash + "\ncompiler=" + resolved.compiler +
                           "\n";
    for (const fs::path& patch : request.patches) {
        if (!fs::is_regular_file(patch))
            return fail(ErrorKind::config, "patch " + patch.string() + " does not exist");
        key_text += "patch=" + RIG_TRY(util::sha256_file(patch)) + "\n";
    }
    resolved.cache_key = util::sha256_hex(key_text).substr(0, 16);
    return resolved;
}

fs::path repository_dir(const fs::path& cache, const fs::path& repo) {
    std::error_code canonical_error;
    fs::path resolved = fs::canonical(repo, canonical_error);
    if (canonical_error)
        resolved = repo;
    return cache / "git" / util::sha256_hex(resolved.string()).substr(0, 16);
}

Expected<Repository> open_repository(const GitRequest& request, const fs::path& cache,
                                     const std::function<void()>& waiting) {
    const fs::path repo_dir = repository_dir(cache, request.repo);
    std::error_code ec;
    fs::create_directories(repo_dir, ec);
    fs::create_directories(cache / "git" / "logs", ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + repo_dir.string() + ": " + ec.message());
    auto lock = RIG_TRY(util::FileLock::acquire(repo_dir / "lock", waiting));
    Repository repository{repo_dir, std::move(lock)};
    RIG_TRY(util::write_file_atomically(repo_dir / "repo", request.repo.string() + "\n"));
    return repository;
}

Builder start_builder(const BuildSettings& settings, const GitRequest& request,
                      const Resolved& resolved) {
    Builder builder(settings, settings.cache / "git" / "logs" /
                                  (utc_stamp() + "-" + resolved.commit.substr(0, 12) + "-" +
                                   resolved.config_hash + ".log"));
    builder.log("rig: building " + resolved.commit + " of " + request.repo.string() +
                "\nrig: fragments " + util::join(request.fragments, ", ") + ", config hash " +
                resolved.config_hash + ", compiler " + resolved.compiler + "\nrig: requested\n" +
                resolved.config.text);
    return builder;
}

Expected<std::variant<fs::path, std::string>> check_out(const GitRequest& request,
                                                        const std::string& commit,
                                                        const fs::path& repo_dir,
                                                        Builder& builder) {
    RIG_TRY(proc::check_git_operand(request.repo.string(), "kernel repository"));
    const fs::path src = repo_dir / "src";
    std::error_code ec;
    if (!fs::exists(src / ".git")) {
        builder.report("cloning");
        fs::path partial = repo_dir / "src.partial";
        fs::remove_all(partial, ec);
        RIG_TRY(builder.run_checked({"git", "clone", "--quiet", "--shared", "--no-checkout", "--",
                                     request.repo.string(), partial.string()},
                                    repo_dir));
        fs::rename(partial, src, ec);
        if (ec)
            return fail(ErrorKind::infra,
                        "cannot rename " + partial.string() + ": " + ec.message());
    }
    builder.report("checkout");
    RIG_TRY(clear_stale_index_lock(src, builder));
    if (fs::exists(src / ".git" / "rebase-apply"))
        RIG_TRY(builder.run({"git", "am", "--abort"}, src));
    if (RIG_TRY(builder.run({"git", "cat-file", "-e", commit + "^{commit}"}, src)).exit_code != 0)
        RIG_TRY(builder.run_checked(
            {"git", "fetch", "--quiet", "--no-tags", "--", request.repo.string(), commit}, src));
    // Only files that differ are rewritten, so make's timestamps see just the change.
    RIG_TRY(builder.run_checked({"git", "-c", "advice.detachedHead=false", "checkout", "--quiet",
                                 "--force", "--detach", commit},
                                src));
    RIG_TRY(builder.run_checked({"git", "clean", "-fdxq"}, src));

    for (const fs::path& patch : request.patches) {
        builder.report("applying " + patch.filename().string());
        auto applied =
            RIG_TRY(builder.run({"git", "-c", "user.name=rig", "-c", "user.email=rig@localhost",
                                 "am", "--quiet", patch.string()},
                                src));
        if (applied.exit_code != 0) {
            RIG_TRY(builder.run({"git", "am", "--abort"}, src));
            return std::string("patch " + patch.string() + " does not apply to " +
                               commit.substr(0, 12) + ": " + tail(applied.out + applied.err, 1500));
        }
    }
    return src;
}

} // namespace rig::kernel
