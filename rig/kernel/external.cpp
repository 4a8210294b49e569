// SPDX-License-Identifier: MIT
// Out-of-tree modules built against a git kernel's own tree and build folder.
#include "kernel/external.hpp"

#include "kernel/build.hpp"
#include "kernel/builder.hpp"
#include "kernel/checkout.hpp"
#include "kernel/configure.hpp"
#include "kernel/make.hpp"
#include "kernel/module.hpp"
#include "proc/ownership.hpp"
#include "util/strings.hpp"

#include <unistd.h>

namespace rig::kernel {

namespace fs = std::filesystem;

Expected<ExternalBuild> build_external_module(const GitRequest& request,
                                              const BuildSettings& settings,
                                              const fs::path& module_dir) {
    ExternalBuild result;
    Resolved resolved = RIG_TRY(resolve(request));
    Repository repository = RIG_TRY(open_repository(request, settings.cache, [&] {
        if (settings.progress)
            settings.progress({"waiting for another build of this repository", 0, 0});
    }));
    Builder builder = start_builder(settings, request, resolved);
    builder.log("rig: an out-of-tree module in " + module_dir.string());
    auto checked_out = RIG_TRY(check_out(request, resolved.commit, repository.dir, builder));
    if (auto* problem = std::get_if<std::string>(&checked_out)) {
        result.outcome = core::BuildOutcome::config_error;
        result.error_lines = *problem;
        return result;
    }
    const fs::path src = std::get<fs::path>(checked_out);
    // The folder the artifact was built in: another commit or patch set of this config may
    // have been built there since, so the tree is configured and prepared again for this
    // one (incremental: seconds when nothing changed).
    const fs::path out = build_folder(repository.dir, resolved.config_hash);
    ConfinedTree tree(settings, src, out);
    auto [problems, actual] =
        RIG_TRY(configure(tree, resolved.config, resolved.compiler, settings.cache, builder));
    if (!problems.empty()) {
        result.outcome = core::BuildOutcome::config_error;
        result.error_lines = util::join(problems, "\n");
        return result;
    }
    if (actual.count("CONFIG_MODULES") == 0 || actual.at("CONFIG_MODULES") != "y") {
        result.outcome = core::BuildOutcome::config_error;
        result.error_lines = "CONFIG_MODULES is not set in this kernel's .config";
        return result;
    }
    // The compiler, ccache folder and identity the kernel was built with: kbuild rebuilds
    // what a changed command line reaches, and a module's vermagic must be the kernel's.
    MakeTools tools = make_tools(tree, settings);
    const fs::path seen_module = tree.writable(module_dir, "module");
    RIG_TRY(tree.hand_over());
    std::vector<std::string> prepare{
        "make", "-C", tree.src().string(), "O=" + tree.out().string(),
        "-j" + std::to_string(settings.jobs > 0 ? settings.jobs : default_jobs())};
    prepare.insert(prepare.end(), tools.args.begin(), tools.args.end());
    prepare.push_back("modules_prepare");
    proc::Confinement confinement = tree.confinement();
    auto prepared = RIG_TRY(builder.run(prepare, "/", confinement, tools.env));
    if (prepared.exit_code != 0) {
        result.outcome = core::BuildOutcome::build_failed;
        result.error_lines = first_errors(prepared.out + "\n" + prepared.err);
        return result;
    }
    auto built =
        RIG_TRY(builder.run(module_make_argv(tree.src(), tree.out(), seen_module, tools.args), "/",
                            confinement, tools.env));
    // rig's own again, to be kept in the cache.
    RIG_TRY(proc::give_all(module_dir, ::geteuid(), ::getegid()));
    if (built.exit_code != 0) {
        result.outcome = core::BuildOutcome::build_failed;
        result.error_lines = first_errors(built.out + "\n" + built.err);
    }
    return result;
}

} // namespace rig::kernel
