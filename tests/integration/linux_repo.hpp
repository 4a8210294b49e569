// SPDX-License-Identifier: MIT
// The test kernel repository: Debian's linux-source-6.1 as a git repository inside
// RIG_CACHE, made once and shared by every suite that builds kernels, so that their
// builds, build folders and ccache are shared too.
#pragma once

#include "proc/process.hpp"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <string>
#include <sys/file.h>
#include <unistd.h>
#include <vector>

namespace rig::test {

inline constexpr const char* k_linux_tarball = "/usr/src/linux-source-6.1.tar.xz";
inline constexpr const char* k_linux_base_tag = "v6.1-debian";

// Runs a command that must succeed; its stdout, trimmed of the final newline.
inline std::string must_run(const std::vector<std::string>& argv,
                            const std::filesystem::path& cwd = {},
                            const std::map<std::string, std::string>& env = {},
                            std::chrono::minutes timeout = std::chrono::minutes(20)) {
    proc::RunOptions options;
    options.cwd = cwd;
    options.env = env;
    options.timeout = timeout;
    auto result = proc::run(argv, options);
    if (!result) {
        ADD_FAILURE() << argv[0] << ": " << result.error().message;
        return "";
    }
    if (result->exit_code != 0)
        ADD_FAILURE() << argv[0] << " " << (argv.size() > 1 ? argv[1] : "")
                      << " failed: " << result->err;
    std::string out = result->out;
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

inline const std::map<std::string, std::string>& git_identity() {
    static const std::map<std::string, std::string> k_env{
        {"GIT_AUTHOR_NAME", "rig"},
        {"GIT_AUTHOR_EMAIL", "rig@localhost"},
        {"GIT_COMMITTER_NAME", "rig"},
        {"GIT_COMMITTER_EMAIL", "rig@localhost"},
        {"GIT_AUTHOR_DATE", "2023-01-01T00:00:00Z"},
        {"GIT_COMMITTER_DATE", "2023-01-01T00:00:00Z"}};
    return k_env;
}

// $RIG_CACHE/test-linux/linux, created on first use: the tarball extracted (about 10 s),
// Debian's catch-all .gitignore block dropped (it ignores everything at the top level,
// so `git add -A` would add nothing), and committed once with a fixed identity and date,
// so the base commit is the same on every machine. Tagged v6.1-debian.
inline std::filesystem::path linux_repo() {
    namespace fs = std::filesystem;
    const char* cache = std::getenv("RIG_CACHE");
    if (cache == nullptr) {
        ADD_FAILURE() << "RIG_CACHE is set by meson test";
        return {};
    }
    fs::path root = fs::path(cache) / "test-linux";
    fs::path repo = root / "linux";
    fs::create_directories(root);
    // Two suites may ask at once; the second waits for the first to finish.
    int fd = ::open((root / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ::flock(fd, LOCK_EX);
    if (!fs::exists(repo / ".git")) {
        EXPECT_TRUE(fs::exists(k_linux_tarball))
            << k_linux_tarball << " is missing: scripts/install-deps installs linux-source-6.1";
        fs::path partial = root / "linux.partial";
        fs::remove_all(partial);
        fs::create_directories(partial);
        must_run({"tar", "-xf", k_linux_tarball, "-C", partial.string(), "--strip-components=1"});
        std::ifstream in(partial / ".gitignore");
        std::string line, kept, block;
        bool debian = false;
        while (std::getline(in, line)) {
            if (line.find("Debian packaging") != std::string::npos)
                debian = true;
            if (debian)
                continue;
            // A "#" line opens a comment block; hold it until we know which block it is.
            if (line == "#") {
                kept += block;
                block = line + "\n";
                continue;
            }
            kept += block + line + "\n";
            block.clear();
        }
        in.close();
        std::ofstream(partial / ".gitignore", std::ios::trunc) << kept;
        must_run({"git", "init", "-q", "-b", "main"}, partial);
        // Never packed: the first commit's ~75,000 loose objects would start `git gc
        // --auto` in the background, minutes of one core taken from the cold kernel build
        // that follows. Loose objects cost the tests nothing.
        must_run({"git", "config", "gc.auto", "0"}, partial);
        must_run({"git", "add", "-A"}, partial);
        must_run({"git", "commit", "-q", "-m", "linux-source-6.1"}, partial, git_identity());
        must_run({"git", "tag", k_linux_base_tag}, partial);
        fs::rename(partial, repo);
    }
    ::close(fd);
    return repo;
}

// A commit on top of `parent` that replaces one file's content, made with a private
// index so that the repository's checkout is never touched (suites share it). Returns
// the new commit's id; the commit is reachable from refs/rig-tests/<name>.
inline std::string commit_file(const std::filesystem::path& repo, const std::string& parent,
                               const std::string& path, const std::string& content,
                               const std::string& message, const std::string& name) {
    namespace fs = std::filesystem;
    fs::path scratch = repo / ".git" / ("rig-test-" + std::to_string(::getpid()));
    fs::create_directories(scratch);
    std::ofstream(scratch / "content", std::ios::binary | std::ios::trunc) << content;
    std::map<std::string, std::string> env = git_identity();
    env.erase("GIT_AUTHOR_DATE");
    env.erase("GIT_COMMITTER_DATE");
    env["GIT_INDEX_FILE"] = (scratch / "index").string();
    std::string blob = must_run({"git", "hash-object", "-w", (scratch / "content").string()}, repo);
    must_run({"git", "read-tree", parent}, repo, env);
    must_run({"git", "update-index", "--cacheinfo", "100644," + blob + "," + path}, repo, env);
    std::string tree = must_run({"git", "write-tree"}, repo, env);
    std::string commit =
        must_run({"git", "commit-tree", tree, "-p", parent, "-m", message}, repo, env);
    must_run({"git", "update-ref", "refs/rig-tests/" + name, commit}, repo);
    fs::remove_all(scratch);
    return commit;
}

// A file's content at a commit.
inline std::string file_at(const std::filesystem::path& repo, const std::string& commit,
                           const std::string& path) {
    return must_run({"git", "show", commit + ":" + path}, repo) + "\n";
}

// Commits `files` (path -> new content) on top of `parent` with a private index, so the
// shared repository's checkout is never touched, and with a fixed date, so the history
// has the same ids on every run and its builds are cached after the first.
inline std::string commit_files(const std::filesystem::path& repo, const std::string& parent,
                                const std::map<std::string, std::string>& files,
                                const std::string& message, int minute) {
    std::filesystem::path scratch =
        repo / ".git" / ("rig-bisect-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch);
    std::map<std::string, std::string> env = git_identity();
    char date[64];
    std::snprintf(date, sizeof date, "2023-02-01T00:%02d:00Z", minute);
    env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date;
    env["GIT_INDEX_FILE"] = (scratch / "index").string();
    must_run({"git", "read-tree", parent}, repo, env);
    for (const auto& [path, content] : files) {
        std::ofstream(scratch / "content", std::ios::binary | std::ios::trunc) << content;
        std::string blob =
            must_run({"git", "hash-object", "-w", (scratch / "content").string()}, repo);
        must_run({"git", "update-index", "--cacheinfo", "100644," + blob + "," + path}, repo, env);
    }
    std::string tree = must_run({"git", "write-tree"}, repo, env);
    std::string commit =
        must_run({"git", "commit-tree", tree, "-p", parent, "-m", message}, repo, env);
    std::filesystem::remove_all(scratch);
    return commit;
}

inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
        text.replace(at, from.size(), to);
    return text;
}

} // namespace rig::test
