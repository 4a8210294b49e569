// SPDX-License-Identifier: MIT
// A config's first build folder, copied from the repository's newest finished one.
#include "kernel/seed.hpp"

#include "util/file.hpp"
#include "util/strings.hpp"

namespace rig::kernel {

namespace fs = std::filesystem;

namespace {

// The newest build folder of the repository that holds a finished build, if any.
std::optional<fs::path> newest_finished_build(const fs::path& repo_dir) {
    std::optional<fs::path> newest;
    fs::file_time_type newest_time;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(repo_dir, ec)) {
        std::string name = entry.path().filename().string();
        if (!util::starts_with(name, "build-") || name.ends_with(".partial"))
            continue;
        auto time = fs::last_write_time(entry.path() / "vmlinux", ec);
        if (ec)
            continue;
        if (!newest || time > newest_time) {
            newest = entry.path();
            newest_time = time;
        }
    }
    return newest;
}

// Make's records in a copied build folder (.cmd and .d files) that name the folder it was
// copied from, rewritten to name `to`. Kbuild's own records are relative, but objtool's
// (tools/objtool) hold absolute paths: left alone, objtool would see a new command line,
// rebuild, and its new mtime would make Kbuild recompile every object.
Expected<void> move_recorded_paths(const fs::path& folder, const std::string& from,
                                   const std::string& to) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path& path = it->path();
        std::string name = path.filename().string();
        if (!it->is_regular_file(ec) || !(name.ends_with(".cmd") || name.ends_with(".d")))
            continue;
        std::string text = util::read_file(path);
        if (text.find(from) == std::string::npos)
            continue;
        auto times = fs::last_write_time(path, ec);
        RIG_TRY(
            util::write_file_atomically(path, util::replace_all(text, from, to), util::Sync::skip));
        fs::last_write_time(path, times, ec);
    }
    if (ec)
        return fail(ErrorKind::infra, "cannot read " + folder.string() + ": " + ec.message());
    return {};
}

} // namespace

// A config's first build starts from a copy of the newest finished build folder of the
// same repository. Kbuild records each object's options and command line, so it rebuilds
// exactly what the changed options reach: a config that differs in a few options builds
// in seconds instead of a cold build's ten minutes, with the same result.
Expected<void> seed_build_folder(const fs::path& repo_dir, const fs::path& out, Builder& builder) {
    std::error_code ec;
    if (fs::exists(out, ec))
        return {};
    auto seed = newest_finished_build(repo_dir);
    if (!seed)
        return {};
    builder.report("seeding the build folder from " + seed->filename().string());
    fs::path partial = out.string() + ".partial";
    fs::remove_all(partial, ec);
    RIG_TRY(builder.run_checked(
        {"cp", "-a", "--reflink=auto", "--", seed->string(), partial.string()}, repo_dir));
    RIG_TRY(move_recorded_paths(partial, seed->string(), out.string()));
    fs::rename(partial, out, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot rename " + partial.string() + ": " + ec.message());
    builder.log("rig: build folder seeded from " + seed->string());
    return {};
}

} // namespace rig::kernel
