// SPDX-License-Identifier: MIT
// The kernel cache's garbage collection: what has not been used for a while goes.
#include "kernel/gc.hpp"

#include "util/file.hpp"
#include "util/lock.hpp"
#include "util/strings.hpp"

#include <map>
#include <vector>

namespace rig::kernel {

namespace fs = std::filesystem;

namespace {

uint64_t tree_size(const fs::path& path) {
    uint64_t bytes = 0;
    std::error_code ec;
    if (fs::is_regular_file(path, ec))
        return fs::file_size(path, ec);
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && !it->is_symlink(ec))
            bytes += it->file_size(ec);
    return bytes;
}

// Build folders, per repository, under that repository's lock (skipped when busy): the
// stale ones, and every one (with the clone) of a repository that is gone.
template <typename Stale>
void collect_build_dirs(const fs::path& cache, Stale stale, GcResult& gc) {
    std::error_code ec;
    if (!fs::is_directory(cache / "git"))
        return;
    for (const auto& repo : fs::directory_iterator(cache / "git", ec)) {
        if (!fs::exists(repo.path() / "lock"))
            continue;
        auto lock = util::FileLock::try_acquire(repo.path() / "lock");
        if (!lock || !*lock)
            continue;
        fs::path origin(util::trim(util::read_file(repo.path() / "repo")));
        bool gone = origin.empty() || !fs::exists(origin);
        for (const auto& entry : fs::directory_iterator(repo.path(), ec)) {
            std::string name = entry.path().filename().string();
            bool folder = util::starts_with(name, "build-") || util::starts_with(name, "config-");
            // A folder's record of its last configure (kernel/configure) goes with it.
            if (folder && name.ends_with(".configured")) {
                if (gone || stale(entry.path()))
                    fs::remove(entry.path(), ec);
            } else if (folder && (gone || stale(entry.path()))) {
                gc.bytes_freed += tree_size(entry.path());
                fs::remove_all(entry.path(), ec);
                ++gc.build_dirs_removed;
            } else if (gone && (name == "src" || name == "src.partial")) {
                gc.bytes_freed += tree_size(entry.path());
                fs::remove_all(entry.path(), ec);
            }
        }
    }
}

} // namespace

// Marks a file or folder as used now, for `rig kernel gc`.
void touch(const fs::path& path) {
    std::error_code ec;
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

Expected<GcResult> collect_garbage(const fs::path& cache, std::chrono::hours unused_for,
                                   const Forget& forget) {
    GcResult gc;
    const auto cutoff = fs::file_time_type::clock::now() - unused_for;
    std::error_code ec;
    auto stale = [&](const fs::path& path) {
        std::error_code time_ec;
        auto time = fs::last_write_time(path, time_ec);
        return unused_for.count() == 0 || (!time_ec && time < cutoff);
    };

    // Artifacts: an index names a content-addressed folder, which a Debian or image
    // kernel (or another build) may share; a folder goes only when nothing names it.
    std::map<std::string, int> references;
    std::vector<fs::path> removed_indexes;
    for (const fs::path& folder : {cache / "kernels" / "git", cache / "kernels" / "debian"}) {
        if (!fs::is_directory(folder))
            continue;
        for (const auto& entry : fs::directory_iterator(folder, ec)) {
            std::string id(util::trim(util::read_file(entry.path())));
            if (folder.filename() == "git" && stale(entry.path())) {
                removed_indexes.push_back(entry.path());
                continue;
            }
            ++references[id];
        }
    }
    for (const fs::path& index : removed_indexes) {
        std::string id(util::trim(util::read_file(index)));
        fs::remove(index, ec);
        RIG_TRY(forget(index.filename().string()));
        ++gc.artifacts_removed;
        fs::path dir = cache / "kernels" / id;
        if (id.empty() || references[id] > 0 || !fs::is_directory(dir))
            continue;
        gc.bytes_freed += tree_size(dir);
        fs::remove_all(dir, ec);
        references[id] = 1; // a second index naming it is then a no-op
    }

    collect_build_dirs(cache, stale, gc);
    // Built modules and Debian headers (kernel/module.hpp), touched on every use.
    for (const fs::path& folder : {cache / "modules", cache / "headers"})
        if (fs::is_directory(folder))
            for (const auto& entry : fs::directory_iterator(folder, ec))
                if (stale(entry.path())) {
                    gc.bytes_freed += tree_size(entry.path());
                    fs::remove_all(entry.path(), ec);
                }
    // Build logs, and tinyconfig's .config per tree (kernel/configure.cpp), touched on use.
    for (const fs::path& folder : {cache / "git" / "logs", cache / "git" / "tinyconfig"})
        if (fs::is_directory(folder))
            for (const auto& entry : fs::directory_iterator(folder, ec))
                if (stale(entry.path())) {
                    gc.bytes_freed += tree_size(entry.path());
                    fs::remove(entry.path(), ec);
                }
    // Staging left by a killed rig; an hour is far longer than any staging lasts.
    if (fs::is_directory(cache / "tmp"))
        for (const auto& entry : fs::directory_iterator(cache / "tmp", ec))
            if (fs::last_write_time(entry.path(), ec) <
                fs::file_time_type::clock::now() - std::chrono::hours(1)) {
                gc.bytes_freed += tree_size(entry.path());
                fs::remove_all(entry.path(), ec);
            }
    return gc;
}

} // namespace rig::kernel
