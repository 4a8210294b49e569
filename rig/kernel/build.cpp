// SPDX-License-Identifier: MIT
// Git kernel builds: the steps run in order (checkout, seed, configure, make), and the
// artifact collected into the cache.
#include "kernel/build.hpp"

#include "kernel/builder.hpp"
#include "kernel/checkout.hpp"
#include "kernel/configure.hpp"
#include "kernel/confine.hpp"
#include "kernel/gc.hpp"
#include "kernel/make.hpp"
#include "kernel/seed.hpp"
#include "proc/ownership.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"

#include <unistd.h>
#include <variant>

namespace rig::kernel {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

fs::path absolute_from(const fs::path& base, const std::string& path) {
    fs::path p(path);
    return p.is_absolute() ? p.lexically_normal() : fs::absolute(base / p).lexically_normal();
}

// The built kernel (and its modules) copied out of the build folder into the cache: the
// vmlinux, and the bzImage when make built one (a folder's bzImage from an earlier build
// of another target may be stale).
Expected<Artifact> collect_artifact(ConfinedTree& tree, const std::string& target, bool modules,
                                    const fs::path& cache, const fs::path& index,
                                    Builder& builder) {
    const fs::path& out = tree.real_out();
    fs::path staging = RIG_TRY(make_staging(cache));
    std::error_code ec;
    Artifact artifact;
    artifact.release =
        std::string(util::trim(util::read_file(out / "include/config/kernel.release")));
    if (target == k_bzimage_target)
        fs::copy_file(out / "arch/x86/boot/bzImage", staging / "vmlinuz", ec);
    if (!ec)
        fs::copy_file(out / "vmlinux", staging / "vmlinux", ec);
    // The .config travels with the kernel: a report of a culprit built long ago, or by
    // another database's run, still carries it. (The first config to build an image: one
    // that builds the same image keeps that artifact, config and all.)
    if (!ec)
        fs::copy_file(out / ".config", staging / "config", ec);
    if (ec)
        return fail(ErrorKind::infra,
                    "cannot copy the kernel from " + out.string() + ": " + ec.message());
    if (modules) {
        fs::path seen_staging = tree.writable(staging, "staging");
        RIG_TRY(tree.hand_over());
        RIG_TRY(
            builder.run_checked({"make", "-C", tree.src().string(), "O=" + tree.out().string(),
                                 "INSTALL_MOD_PATH=" + seen_staging.string(), "modules_install"},
                                "/", tree.confinement()));
        // rig's own again: the cache holds nothing the build's user may change.
        RIG_TRY(proc::give_all(staging, ::geteuid(), ::getegid()));
        // Links back into the build folders; a guest needs neither.
        fs::remove(staging / "lib/modules" / artifact.release / "build", ec);
        fs::remove(staging / "lib/modules" / artifact.release / "source", ec);
    }
    return adopt_staged(staging, artifact, cache, index);
}

} // namespace

GitRequest git_request(const core::Kernel& kernel, const std::vector<std::string>& fragments,
                       const fs::path& base_dir) {
    GitRequest request;
    request.repo = absolute_from(base_dir, kernel.repo);
    request.ref = kernel.ref;
    request.fragments = fragments;
    for (const std::string& patch : kernel.patches)
        request.patches.push_back(absolute_from(base_dir, patch));
    request.options = kernel.options;
    request.fragment_dirs = {fs::absolute(base_dir), fs::absolute(base_dir / "kernels")};
    return request;
}

Expected<BuildResult> build_git(const GitRequest& request, const BuildSettings& settings) {
    auto started = Clock::now();
    auto report = [&](const std::string& phase) {
        if (settings.progress)
            settings.progress(
                {phase, 0, std::chrono::duration<double>(Clock::now() - started).count()});
    };
    report("resolving " + request.ref);
    BuildResult result;
    result.repo = request.repo.string();
    Resolved resolved = RIG_TRY(resolve(request));
    result.commit = resolved.commit;
    result.config_hash = resolved.config_hash;
    result.compiler = resolved.compiler;
    result.cache_key = resolved.cache_key;
    const fs::path index = settings.cache / "kernels" / "git" / result.cache_key;
    if (auto artifact = load_index(index, settings.cache)) {
        touch(index);
        result.cache_hit = true;
        result.artifact = std::move(*artifact);
        return result;
    }

    Repository repository = RIG_TRY(open_repository(
        request, settings.cache, [&] { report("waiting for another build of this repository"); }));
    const fs::path& repo_dir = repository.dir;
    // Another rig may have built it while this one waited.
    if (auto artifact = load_index(index, settings.cache)) {
        result.cache_hit = true;
        result.artifact = std::move(*artifact);
        return result;
    }

    Builder builder = start_builder(settings, request, resolved);
    result.log = builder.log_path();
    auto finish = [&](core::BuildOutcome outcome, std::string error_lines) {
        result.outcome = outcome;
        result.error_lines = std::move(error_lines);
        result.seconds = builder.elapsed();
        builder.log("rig: " + std::string(to_string(outcome)) + " after " +
                    std::to_string(result.seconds) + " s" +
                    (result.error_lines.empty() ? "" : "\n" + result.error_lines));
        return result;
    };

    auto checked_out = RIG_TRY(check_out(request, result.commit, repo_dir, builder));
    if (auto* problem = std::get_if<std::string>(&checked_out))
        return finish(core::BuildOutcome::config_error, *problem);
    const fs::path src = std::get<fs::path>(checked_out);

    const fs::path out = build_folder(repo_dir, result.config_hash);
    RIG_TRY(seed_build_folder(repo_dir, out, builder));
    ConfinedTree tree(settings, src, out);
    auto [problems, actual] =
        RIG_TRY(configure(tree, resolved.config, resolved.compiler, settings.cache, builder));
    if (!problems.empty())
        return finish(core::BuildOutcome::config_error, util::join(problems, "\n"));

    bool modules = uses_modules(actual);
    const std::string target = image_target(actual);
    builder.report(modules ? "building (with modules)" : "building");
    if (auto errors =
            RIG_TRY(run_make(builder, tree, target, modules, settings, result.config_hash)))
        return finish(core::BuildOutcome::build_failed, *errors);

    builder.report("collecting");
    result.artifact =
        RIG_TRY(collect_artifact(tree, target, modules, settings.cache, index, builder));
    return finish(core::BuildOutcome::ok, "");
}

fs::path build_folder(const fs::path& repo_dir, const std::string& config_hash) {
    return repo_dir / ("build-" + config_hash);
}

Expected<std::optional<ConfigValues>> built_config(const GitRequest& request,
                                                   const fs::path& cache) {
    Resolved resolved = RIG_TRY(resolve(request));
    const fs::path config =
        build_folder(repository_dir(cache, request.repo), resolved.config_hash) / ".config";
    if (!fs::is_regular_file(config))
        return std::optional<ConfigValues>();
    return std::optional<ConfigValues>(parse_config(util::read_file(config)));
}

Expected<ConfigResult> configure_git(const GitRequest& request, const BuildSettings& settings) {
    ConfigResult result;
    Resolved resolved = RIG_TRY(resolve(request));
    result.commit = resolved.commit;
    result.config_hash = resolved.config_hash;
    Repository repository = RIG_TRY(open_repository(request, settings.cache, [&] {
        if (settings.progress)
            settings.progress({"waiting for another build of this repository", 0, 0});
    }));
    const fs::path& repo_dir = repository.dir;
    Builder builder = start_builder(settings, request, resolved);
    result.log = builder.log_path();
    auto checked_out = RIG_TRY(check_out(request, result.commit, repo_dir, builder));
    if (auto* problem = std::get_if<std::string>(&checked_out)) {
        result.outcome = core::BuildOutcome::config_error;
        result.error_lines = *problem;
        return result;
    }
    // Not a build folder: one without objects would keep the config's first build from
    // being seeded by a finished one.
    const fs::path out = repo_dir / ("config-" + result.config_hash);
    ConfinedTree tree(settings, std::get<fs::path>(checked_out), out);
    auto [problems, actual] =
        RIG_TRY(configure(tree, resolved.config, resolved.compiler, settings.cache, builder));
    result.outcome = problems.empty() ? core::BuildOutcome::ok : core::BuildOutcome::config_error;
    result.error_lines = util::join(problems, "\n");
    result.requested = resolved.config.values.size();
    result.config = out / ".config";
    builder.log("rig: " + std::string(to_string(result.outcome)) +
                (result.error_lines.empty() ? "" : "\n" + result.error_lines));
    return result;
}

} // namespace rig::kernel
