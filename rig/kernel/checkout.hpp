// SPDX-License-Identifier: MIT
// Internal to kernel/: a git request resolved to its commit and cache key, and rig's own
// clone of the repository, under its lock, checked out at the commit with the patches.
#pragma once

#include "kernel/build.hpp"
#include "kernel/builder.hpp"
#include "kernel/config.hpp"
#include "util/error.hpp"
#include "util/lock.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <variant>

namespace rig::kernel {

// What a request resolves to before anything is checked out: the commit, the requested
// configuration and the cache key of the artifact it would build.
struct Resolved {
    std::string commit;
    RequestedConfig config;
    std::string config_hash;
    std::string compiler;
    std::string cache_key;
};

// Bad requests (no repository, unknown ref, missing patch file or fragment) are errors.
Expected<Resolved> resolve(const GitRequest& request);

// rig's folder for one repository, held under its lock: two rigs building the same
// repository take turns, since they share its clone and build folders. Keyed by the
// resolved path, so a repository reached through a symlink shares its build folders (and
// their incremental builds) with the same repository named directly.
struct Repository {
    std::filesystem::path dir;
    util::FileLock lock;
};

// Its folder, cache/git/<hash of the resolved path>, without taking the lock.
std::filesystem::path repository_dir(const std::filesystem::path& cache,
                                     const std::filesystem::path& repo);

// `waiting` is called when another rig holds the lock.
Expected<Repository> open_repository(const GitRequest& request, const std::filesystem::path& cache,
                                     const std::function<void()>& waiting);

// A build logging into a new file under cache/git/logs, which starts with what it builds.
Builder start_builder(const BuildSettings& settings, const GitRequest& request,
                      const Resolved& resolved);

// The index.lock a git killed with an earlier rig left in `work_tree`, removed when no
// process holds it: none has it open and no git works in the tree. A held one is an infra
// error that names the processes, and stays.
Expected<void> clear_stale_index_lock(const std::filesystem::path& work_tree, Builder& builder);

// rig's own clone (cache/git/<repo>/src) at the commit, with the patches applied. It
// borrows the user's objects (--shared), so it costs little and sees every commit of the
// repository, and `git am` never writes into the user's tree. Returns the clone, or a
// patch that does not apply as the text of a config error.
Expected<std::variant<std::filesystem::path, std::string>>
check_out(const GitRequest& request, const std::string& commit,
          const std::filesystem::path& repo_dir, Builder& builder);

} // namespace rig::kernel
