// SPDX-License-Identifier: MIT
// get_maintainer.pl on a culprit's patch, confined.
#include "watch/maintainers.hpp"

#include "host/account.hpp"
#include "proc/git.hpp"
#include "proc/process.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"

#include <cstdlib>
#include <filesystem>

namespace rig::watch {

namespace fs = std::filesystem;

namespace {

// A scratch folder the unprivileged user may read, removed with this object.
class Scratch {
public:
    Scratch() {
        std::string pattern = (fs::temp_directory_path() / "rig-maintainers-XXXXXX").string();
        if (::mkdtemp(pattern.data()) != nullptr)
            m_path = pattern;
        std::error_code ec;
        fs::permissions(m_path,
                        fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec,
                        ec);
    }
    ~Scratch() {
        std::error_code ec;
        if (!m_path.empty())
            fs::remove_all(m_path, ec);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

// One file of `commit`, or nothing when the tree has none.
Expected<std::optional<std::string>> file_at(const Branch& branch, const std::string& commit,
                                             const std::string& path) {
    proc::RunOptions options;
    options.max_output = 64 << 20;
    proc::RunResult result = RIG_TRY(
        proc::run_git({"-C", branch.repo().string(), "show", commit + ":" + path}, options));
    if (result.exit_code != 0)
        return std::optional<std::string>();
    return std::optional<std::string>(std::move(result.out));
}

} // namespace

Expected<std::vector<std::string>> maintainers(const Branch& branch, const std::string& commit) {
    auto script = RIG_TRY(file_at(branch, commit, "scripts/get_maintainer.pl"));
    auto table = RIG_TRY(file_at(branch, commit, "MAINTAINERS"));
    if (!script || !table)
        return std::vector<std::string>();
    proc::RunOptions patch_options;
    patch_options.max_output = 64 << 20;
    proc::RunResult patch = RIG_TRY(proc::run_git(
        {"-C", branch.repo().string(), "format-patch", "-1", "--stdout", commit}, patch_options));
    if (patch.exit_code != 0)
        return fail(ErrorKind::infra, "git format-patch " + commit + ": " + patch.err);

    Scratch scratch;
    if (scratch.path().empty())
        return fail(ErrorKind::infra, "cannot make a scratch folder for get_maintainer.pl");
    RIG_TRY(util::write_file_atomically(scratch.path() / "get_maintainer.pl", *script,
                                        util::Sync::skip));
    RIG_TRY(util::write_file_atomically(scratch.path() / "MAINTAINERS", *table, util::Sync::skip));
    RIG_TRY(
        util::write_file_atomically(scratch.path() / "culprit.patch", patch.out, util::Sync::skip));
    for (const char* name : {"get_maintainer.pl", "MAINTAINERS", "culprit.patch"}) {
        std::error_code ec;
        fs::permissions(scratch.path() / name,
                        fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::others_read,
                        ec);
    }

    proc::RunOptions options;
    options.confinement.user = RIG_TRY(host::untrusted_user());
    options.confinement.no_network = true;
    fs::path seen = scratch.path();
    if (options.confinement.user) {
        seen = fs::path(proc::k_bind_root) / "maintainers";
        options.confinement.binds.push_back({scratch.path(), seen, true});
    }
    options.timeout = std::chrono::minutes(2);
    proc::RunResult result =
        RIG_TRY(proc::run({"perl", (seen / "get_maintainer.pl").string(), "--no-tree", "--nogit",
                           "--nogit-fallback", "--norolestats", "--mpath",
                           (seen / "MAINTAINERS").string(), (seen / "culprit.patch").string()},
                          options));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, "get_maintainer.pl of " + commit + " failed: " + result.err);
    std::vector<std::string> out;
    // What the tree's script prints is not trusted: only lines that read as one address.
    for (const std::string& line : util::split(result.out, '\n'))
        if (line.find('@') != std::string::npos && line.size() < 200 &&
            line.find_first_of(",\r\t") == std::string::npos)
            out.push_back(line);
    return out;
}

} // namespace rig::watch
