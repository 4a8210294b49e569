// SPDX-License-Identifier: MIT
// The real kernel provider: git builds and prebuilt kernels, recorded, with their initramfs.
#include "run/kernel_provider.hpp"

#include "guest/initramfs.hpp"
#include "host/account.hpp"
#include "kernel/build.hpp"
#include "run/kernel_records.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <variant>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

class LocalKernels final : public KernelProvider {
public:
    LocalKernels(fs::path cache, bool tty, store::Database& db,
                 const std::atomic<bool>& interrupted)
        : m_cache(std::move(cache)), m_tty(tty), m_db(db), m_interrupted(interrupted) {}

    Expected<PreparedKernel> prepare(const core::Scenario& scenario, const core::Cell& cell,
                                     Progress& progress) override;

private:
    Expected<std::variant<kernel::Artifact, KernelBuildFailure>>
    git_artifact(const core::Scenario& scenario, const core::Cell& cell, Progress& progress);
    Expected<std::optional<kernel::ModuleBuild>> module_for_cell(const core::Scenario& scenario,
                                                                 const core::Cell& cell,
                                                                 const kernel::Artifact& artifact,
                                                                 Progress& progress);

    fs::path m_cache;
    bool m_tty;
    store::Database& m_db;
    const std::atomic<bool>& m_interrupted;
};

// A failed build is recorded in the store. One whose make failed ends only its own cells
// (their samples are build-failed); a config error stops the run, naming the kernel, the
// commit and what is wrong.
Expected<std::variant<kernel::Artifact, KernelBuildFailure>>
LocalKernels::git_artifact(const core::Scenario& scenario, const core::Cell& cell,
                           Progress& progress) {
    const core::Kernel& spec = scenario.kernels[cell.kernel];
    std::string label = "kernel " + spec.name + " [" + util::join(cell.fragments, ", ") + "]";
    kernel::BuildSettings build;
    build.cache = m_cache;
    build.interrupted = &m_interrupted;
    build.make_user = RIG_TRY(host::untrusted_user());
    auto pacer = kernel::ProgressPacer::for_output(m_tty);
    build.progress = [&](const kernel::BuildProgress& status) {
        if (!pacer.due(status))
            return;
        progress.phase(
            label + ": " + kernel::progress_text(status) + ", " +
            util::format_duration(status.elapsed_seconds, util::DurationStyle::progress));
    };
    fs::path scenario_dir = scenario.dir;
    auto result =
        RIG_TRY(kernel::build_git(kernel::git_request(spec, cell.fragments, scenario_dir), build));
    RIG_TRY(record_build(m_db, result, spec.name));
    if (result.outcome == core::BuildOutcome::build_failed) {
        KernelBuildFailure failure{label + " at " + result.commit.substr(0, 12), result.error_lines,
                                   result.log};
        progress.note(failure.kernel +
                      ": build-failed; its cells are recorded as such, the "
                      "other kernels' cells run\n" +
                      result.error_lines);
        return failure;
    }
    if (result.outcome != core::BuildOutcome::ok)
        return fail(ErrorKind::config, label + " at " + result.commit.substr(0, 12) + ": " +
                                           std::string(core::to_string(result.outcome)) + "\n" +
                                           result.error_lines + "\n(log: " + result.log.string() +
                                           ")");
    progress.note(label + ": " + result.commit.substr(0, 12) +
                  (result.cache_hit
                       ? ", cached"
                       : ", built in " +
                             util::format_duration(result.seconds, util::DurationStyle::progress)));
    return std::move(*result.artifact);
}

// A module workload's module built for the cell's kernel; one that does not compile is
// the build-failed outcome of that kernel's samples, not an error.
Expected<std::optional<kernel::ModuleBuild>>
LocalKernels::module_for_cell(const core::Scenario& scenario, const core::Cell& cell,
                              const kernel::Artifact& artifact, Progress& progress) {
    if (scenario.workload.kind != core::WorkloadKind::module)
        return std::nullopt;
    const core::Kernel& spec = scenario.kernels[cell.kernel];
    fs::path scenario_dir = scenario.dir;
    kernel::BuildSettings build;
    build.cache = m_cache;
    build.interrupted = &m_interrupted;
    build.make_user = RIG_TRY(host::untrusted_user());
    auto module =
        RIG_TRY(kernel::module_for(scenario_dir / scenario.workload.module, spec, cell.fragments,
                                   scenario_dir, artifact, build, [&](const std::string& phase) {
                                       progress.note("kernel " + spec.name + ": " + phase);
                                   }));
    if (module.outcome == kernel::ModuleOutcome::build_failed)
        progress.note("kernel " + spec.name + ": the module does not compile:\n" +
                      module.error_lines);
    else if (!module.cache_hit)
        progress.note("kernel " + spec.name + ": module built, " + module.ko.filename().string());
    return module;
}

Expected<PreparedKernel> LocalKernels::prepare(const core::Scenario& scenario,
                                               const core::Cell& cell, Progress& progress) {
    const core::Kernel& spec = scenario.kernels[cell.kernel];
    if (spec.source == core::KernelSource::git) {
        auto built = RIG_TRY(git_artifact(scenario, cell, progress));
        if (auto* failure = std::get_if<KernelBuildFailure>(&built))
            return PreparedKernel{{}, {}, std::nullopt, std::move(*failure)};
        kernel::Artifact& artifact = std::get<kernel::Artifact>(built);
        auto initrd = RIG_TRY(guest::base_initramfs(artifact, m_cache));
        auto module = RIG_TRY(module_for_cell(scenario, cell, artifact, progress));
        return PreparedKernel{artifact, initrd, std::move(module), std::nullopt};
    }
    progress.note("kernel " + spec.name + ": fetching and preparing");
    auto artifact = kernel::prebuilt(spec, m_cache, [&](const std::string& phase) {
        progress.note("kernel " + spec.name + ": " + phase);
    });
    if (!artifact)
        return tl::unexpected(kernel::locate(artifact.error(), scenario, spec));
    RIG_TRY(record_prebuilt(m_db, *artifact, spec));
    progress.note("kernel " + spec.name + ": " +
                  (artifact->package.empty()
                       ? artifact->release + " (" + artifact->id + ")"
                       : artifact->package + " " + artifact->package_version) +
                  ", building initramfs");
    auto initrd = RIG_TRY(guest::base_initramfs(*artifact, m_cache));
    auto module = RIG_TRY(module_for_cell(scenario, cell, *artifact, progress));
    return PreparedKernel{*artifact, initrd, std::move(module), std::nullopt};
}

} // namespace

std::unique_ptr<KernelProvider> make_kernel_provider(const fs::path& cache, bool tty,
                                                     store::Database& db,
                                                     const std::atomic<bool>& interrupted) {
    return std::make_unique<LocalKernels>(cache, tty, db, interrupted);
}

} // namespace rig::run
