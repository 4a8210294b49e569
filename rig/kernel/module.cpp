// SPDX-License-Identifier: MIT
// Module builds against a cell's kernel, and the Debian headers they need.
#include "kernel/module.hpp"

#include "kernel/debian.hpp"
#include "kernel/external.hpp"
#include "kernel/gc.hpp"
#include "proc/process.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <fstream>

namespace rig::kernel {

namespace fs = std::filesystem;

namespace {

constexpr auto k_make_timeout = std::chrono::minutes(20);

std::vector<fs::path> files_under(const fs::path& source) {
    std::vector<fs::path> files;
    if (!fs::is_directory(source))
        return {source};
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(source, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file())
            files.push_back(it->path());
    std::sort(files.begin(), files.end());
    return files;
}

fs::path module_dir_in(const fs::path& cache, const std::string& key) {
    return cache / "modules" / key;
}

Expected<proc::RunResult> run_make(const std::vector<std::string>& argv, const fs::path& cwd) {
    proc::RunOptions options;
    options.cwd = cwd;
    options.timeout = k_make_timeout;
    return proc::run(argv, options);
}

// Keeps the .ko the build produced: exactly one, moved into the cache under `key`.
Expected<ModuleBuild> keep_module(const fs::path& built, const fs::path& cache,
                                  const std::string& key) {
    std::vector<fs::path> modules;
    for (const fs::path& file : files_under(built))
        if (file.extension() == ".ko")
            modules.push_back(file);
    if (modules.size() != 1)
        return fail(ErrorKind::config, "the module build in " + built.string() + " made " +
                                           std::to_string(modules.size()) +
                                           " .ko files; a module workload loads exactly one");
    fs::path staging = RIG_TRY(make_staging(cache));
    std::error_code ec;
    fs::copy_file(modules.front(), staging / modules.front().filename(), ec);
    fs::path dir = module_dir_in(cache, key);
    fs::create_directories(dir.parent_path(), ec);
    if (!ec)
        fs::rename(staging, dir, ec);
    if (ec && !fs::exists(dir)) // another rig may have kept the same build meanwhile
        return fail(ErrorKind::infra,
                    "cannot keep the module in " + dir.string() + ": " + ec.message());
    fs::remove_all(staging, ec);
    return ModuleBuild{ModuleOutcome::ok, util::file_with_extension(dir, ".ko"), "", false};
}

// The compiler names the staged copy; the user knows the source.
std::string as_source(std::string lines, const fs::path& staged, const fs::path& source) {
    std::string from = staged.string() + "/";
    std::string to = (fs::is_directory(source) ? source : source.parent_path()).string() + "/";
    for (size_t at = lines.find(from); at != std::string::npos;
         at = lines.find(from, at + to.size()))
        lines.replace(at, from.size(), to);
    return lines;
}

// Debian's headers Makefile includes its -common half by absolute path under /usr/src;
// unpacked into the cache, it must name the cache's copy.
Expected<void> point_makefile_at(const fs::path& makefile, const fs::path& root) {
    std::string text = util::read_file(makefile);
    std::string fixed;
    for (const std::string& line : util::split(text, '\n')) {
        if (line.empty())
            continue;
        std::string out = line;
        if (size_t at = out.find(" /usr/src/");
            util::starts_with(out, "include") && at != std::string::npos)
            out = out.substr(0, at + 1) + (root / "usr/src").string() + out.substr(at + 9);
        fixed += out + "\n";
    }
    std::ofstream file(makefile, std::ios::trunc);
    file << fixed;
    if (!file)
        return fail(ErrorKind::infra, "cannot write " + makefile.string());
    return {};
}

} // namespace

Expected<std::string> module_source_hash(const fs::path& source) {
    if (!fs::exists(source))
        return fail(ErrorKind::config, "module source " + source.string() + " does not exist");
    std::string text;
    for (const fs::path& file : files_under(source)) {
        std::string relative = fs::is_directory(source) ? fs::relative(file, source).string()
                                                        : file.filename().string();
        text += relative + "\n" + RIG_TRY(util::sha256_file(file)) + "\n";
    }
    return util::sha256_hex(text);
}

std::string module_cache_key(const std::string& source_hash, const std::string& artifact_id) {
    return util::sha256_hex("module\n" + source_hash + "\n" + artifact_id + "\n").substr(0, 16);
}

std::vector<std::string> module_make_argv(const fs::path& tree, const fs::path& out,
                                          const fs::path& module_dir,
                                          const std::vector<std::string>& extra) {
    std::vector<std::string> argv{"make", "-C", tree.string()};
    if (!out.empty())
        argv.push_back("O=" + out.string());
    argv.push_back("M=" + module_dir.string());
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("modules");
    return argv;
}

Expected<void> stage_module_source(const fs::path& source, const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (fs::is_directory(source)) {
        if (!fs::exists(source / "Kbuild") && !fs::exists(source / "Makefile"))
            return fail(ErrorKind::config, "module folder " + source.string() +
                                               " has neither a Kbuild nor a Makefile");
        fs::copy(source, dir, fs::copy_options::recursive | fs::copy_options::overwrite_existing,
                 ec);
    } else if (source.extension() == ".c") {
        fs::copy_file(source, dir / source.filename(), fs::copy_options::overwrite_existing, ec);
        if (!ec) {
            std::ofstream kbuild(dir / "Kbuild", std::ios::trunc);
            kbuild << "obj-m := " << source.stem().string() << ".o\n";
        }
    } else {
        return fail(ErrorKind::config, "module source " + source.string() +
                                           " is neither a .c file nor a folder with a Kbuild");
    }
    if (ec)
        return fail(ErrorKind::infra, "cannot copy " + source.string() + ": " + ec.message());
    return {};
}

Expected<fs::path> debian_headers(const Artifact& artifact, const fs::path& cache,
                                  const Status& status) {
    const fs::path root = cache / "headers" / artifact.release;
    const fs::path tree = root / "usr/src" / ("linux-headers-" + artifact.release);
    if (fs::exists(tree / "Makefile")) { // only a whole unpack is renamed into place
        touch(root);
        return tree;
    }
    std::vector<std::string> packages = RIG_TRY(headers_packages(artifact.release));
    fs::path staging = RIG_TRY(make_staging(cache));
    fs::path unpacked = staging / "root";
    std::vector<fs::path> debs;
    for (const std::string& package : packages) {
        fs::path deb = RIG_TRY(download_deb(package, cache, status));
        if (status)
            status("unpacking " + package);
        proc::RunOptions options;
        options.timeout = std::chrono::minutes(10);
        auto result =
            RIG_TRY(proc::run({"dpkg-deb", "-x", deb.string(), unpacked.string()}, options));
        if (result.exit_code != 0)
            return fail(ErrorKind::infra, "dpkg-deb -x " + deb.string() + " failed: " + result.err);
        debs.push_back(deb);
    }
    std::error_code ec;
    fs::create_directories(root.parent_path(), ec);
    fs::rename(unpacked, root, ec);
    if (ec && !fs::exists(tree / "Makefile"))
        return fail(ErrorKind::infra,
                    "cannot move the headers to " + root.string() + ": " + ec.message());
    fs::remove_all(staging, ec);
    RIG_TRY(point_makefile_at(tree / "Makefile", root));
    // The headers are in the cache now; the .debs would only double the space they take.
    for (const fs::path& deb : debs)
        fs::remove_all(deb.parent_path(), ec);
    return tree;
}

Expected<ModuleBuild> module_for(const fs::path& source, const core::Kernel& kernel,
                                 const std::vector<std::string>& fragments,
                                 const fs::path& scenario_dir, const Artifact& artifact,
                                 const BuildSettings& settings, const Status& status) {
    const fs::path& cache = settings.cache;
    std::string key = module_cache_key(RIG_TRY(module_source_hash(source)), artifact.id);
    if (fs::path kept = util::file_with_extension(module_dir_in(cache, key), ".ko");
        !kept.empty()) {
        touch(kept.parent_path());
        return ModuleBuild{ModuleOutcome::ok, kept, "", true};
    }

    fs::path staging = RIG_TRY(make_staging(cache));
    fs::path module_dir = staging / "module";
    RIG_TRY(stage_module_source(source, module_dir));
    ModuleBuild build;
    switch (kernel.source) {
    case core::KernelSource::git: {
        if (status)
            status("building the module against " + kernel.name + "'s tree");
        auto result = RIG_TRY(build_external_module(git_request(kernel, fragments, scenario_dir),
                                                    settings, module_dir));
        if (result.outcome == core::BuildOutcome::config_error)
            return fail(ErrorKind::config,
                        "kernel " + kernel.name +
                            ": cannot prepare its tree for a module: " + result.error_lines);
        if (result.outcome == core::BuildOutcome::build_failed) {
            build = ModuleBuild{ModuleOutcome::build_failed,
                                {},
                                as_source(result.error_lines, module_dir, source),
                                false};
            break;
        }
        build = RIG_TRY(keep_module(module_dir, cache, key));
        break;
    }
    case core::KernelSource::debian:
    case core::KernelSource::image: {
        fs::path tree = kernel.source == core::KernelSource::debian
                            ? RIG_TRY(debian_headers(artifact, cache, status))
                            : fs::absolute(scenario_dir / kernel.build);
        if (status)
            status("building the module against " + tree.string());
        // A module's BTF is for debuggers, not insmod; making it needs pahole (dwarves),
        // which Debian 6.12's headers call for and a host may lack.
        auto result = RIG_TRY(
            run_make(module_make_argv(tree, {}, module_dir, {"CONFIG_DEBUG_INFO_BTF_MODULES="}),
                     module_dir));
        if (result.exit_code != 0) {
            build = ModuleBuild{
                ModuleOutcome::build_failed,
                {},
                as_source(first_errors(result.out + "\n" + result.err), module_dir, source),
                false};
            break;
        }
        build = RIG_TRY(keep_module(module_dir, cache, key));
        break;
    }
    }
    std::error_code ec;
    fs::remove_all(staging, ec);
    return build;
}

} // namespace rig::kernel
