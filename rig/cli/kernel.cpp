// SPDX-License-Identifier: MIT
// `rig kernel`: build or configure a scenario's git kernels, list builds and artifacts, collect
// garbage.
#include "cli/kernel.hpp"

#include "core/matrix.hpp"
#include "host/account.hpp"
#include "kernel/artifact.hpp"
#include "kernel/build.hpp"
#include "report/table.hpp"
#include "run/kernel_records.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <unistd.h>

namespace rig::cli {

namespace fs = std::filesystem;

namespace {

std::string bytes_text(uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return text;
}

// On a terminal one line is redrawn; in a log, timestamped lines (kernel::ProgressPacer).
class BuildReporter final {
public:
    explicit BuildReporter(bool tty)
        : m_tty(tty), m_pacer(kernel::ProgressPacer::for_output(tty)) {}
    void operator()(const kernel::BuildProgress& progress) {
        if (!m_pacer.due(progress))
            return;
        std::string line =
            "  " + kernel::progress_text(progress) + ", " +
            util::format_duration(progress.elapsed_seconds, util::DurationStyle::minutes_colon);
        if (m_tty) {
            std::cout << "\r\033[K" << line << std::flush;
            m_open = true;
            return;
        }
        std::cout << util::log_line(util::real_clock(), line) << "\n" << std::flush;
    }
    void end() {
        if (m_open)
            std::cout << "\r\033[K" << std::flush;
        m_open = false;
        m_pacer = kernel::ProgressPacer::for_output(m_tty);
    }

private:
    bool m_tty;
    bool m_open = false;
    kernel::ProgressPacer m_pacer;
};

// A scenario's git kernels, each once per distinct fragment list, in the plan's order.
struct GitKernels {
    core::Scenario scenario;
    std::vector<std::pair<size_t, std::vector<std::string>>> wanted;
};

Expected<GitKernels> git_kernels(const fs::path& file) {
    GitKernels kernels{RIG_TRY(spec::load_scenario(file)), {}};
    auto cells = RIG_TRY(core::expand(kernels.scenario));
    std::set<std::pair<size_t, std::vector<std::string>>> seen;
    for (const core::Cell& cell : cells)
        if (kernels.scenario.kernels[cell.kernel].source == core::KernelSource::git &&
            seen.insert({cell.kernel, cell.fragments}).second)
            kernels.wanted.emplace_back(cell.kernel, cell.fragments);
    if (kernels.wanted.empty())
        return fail(ErrorKind::usage, file.string() + " has no git kernels to build");
    return kernels;
}

// One git kernel x fragments: its exit code, or an Error that ends the command.
using KernelStep = std::function<Expected<int>(const core::Kernel&, const kernel::GitRequest&,
                                               const kernel::BuildSettings&)>;

// Runs `step` on each git kernel of the scenario after naming it, with `settings` given
// rig's cache and a progress line; the highest exit code wins.
int each_git_kernel(const fs::path& file, kernel::BuildSettings settings, const KernelStep& step) {
    auto kernels = git_kernels(file);
    if (!kernels)
        return report_error(kernels.error());
    BuildReporter reporter(::isatty(STDOUT_FILENO) != 0);
    settings.cache = kernel::default_cache_dir();
    settings.progress = [&](const kernel::BuildProgress& progress) { reporter(progress); };
    const fs::path base_dir = fs::absolute(file).parent_path();
    int exit_code = k_exit_ok;
    for (const auto& [index, fragments] : kernels->wanted) {
        const core::Kernel& spec = kernels->scenario.kernels[index];
        std::cout << "kernel " << spec.name << " [" << util::join(fragments, ", ")
                  << "]: " << spec.ref << "\n"
                  << std::flush;
        auto code = step(spec, kernel::git_request(spec, fragments, base_dir), settings);
        reporter.end();
        if (!code)
            return report_error(code.error());
        exit_code = std::max(exit_code, *code);
    }
    return exit_code;
}

Expected<int> configure_one(const core::Kernel&, const kernel::GitRequest& request,
                            const kernel::BuildSettings& settings) {
    auto result = RIG_TRY(kernel::configure_git(request, settings));
    std::cout << "  " << core::to_string(result.outcome) << ": " << result.commit.substr(0, 12)
              << ", config " << result.config_hash << ", " << result.requested
              << " options requested\n";
    if (result.outcome == core::BuildOutcome::ok) {
        std::cout << "  every option set; resolved: " << result.config.string() << "\n";
        return k_exit_ok;
    }
    std::cout << result.error_lines << "\n  log " << result.log.string() << "\n";
    return k_exit_usage;
}

Expected<int> build_one(store::Database& db, const core::Kernel& spec,
                        const kernel::GitRequest& request, const kernel::BuildSettings& settings) {
    auto result = RIG_TRY(kernel::build_git(request, settings));
    RIG_TRY(run::record_build(db, result, spec.name));
    std::string commit = result.commit.substr(0, 12);
    if (result.cache_hit) {
        std::cout << "  cache hit: " << commit << ", config " << result.config_hash
                  << ", nothing built; " << result.artifact->boot_image.string() << "\n";
        return k_exit_ok;
    }
    std::cout << "  " << core::to_string(result.outcome) << ": " << commit << ", config "
              << result.config_hash << ", " << util::fixed(result.seconds, 1) << " s, log "
              << result.log.string() << "\n";
    switch (result.outcome) {
    case core::BuildOutcome::ok:
        std::cout << "  " << result.artifact->release << ": "
                  << result.artifact->boot_image.string() << "\n";
        return k_exit_ok;
    case core::BuildOutcome::build_failed:
        std::cout << result.error_lines << "\n";
        return k_exit_failed;
    case core::BuildOutcome::config_error:
        std::cout << result.error_lines << "\n";
        return k_exit_usage;
    }
    return k_exit_ok;
}

int config_command(const KernelCommandOptions& options) {
    // No interrupt flag: Ctrl-C may end rig at once, there is no long make to stop.
    kernel::BuildSettings settings;
    auto user = host::untrusted_user();
    if (!user)
        return report_error(user.error());
    settings.make_user = *user;
    return each_git_kernel(options.file, settings, configure_one);
}

int build_command(store::Database& db, const KernelCommandOptions& options) {
    kernel::BuildSettings settings;
    settings.jobs = options.jobs;
    settings.interrupted = &catch_interrupts();
    auto user = host::untrusted_user();
    if (!user)
        return report_error(user.error());
    settings.make_user = *user;
    wait_for_locks(db, *settings.interrupted);
    return each_git_kernel(options.file, settings, std::bind_front(build_one, std::ref(db)));
}

// Fetches the scenario's Debian and image kernels as `rig run` would, and says what each
// Debian name resolved to, without booting anything.
int fetch_command(store::Database& db, const KernelCommandOptions& options) {
    auto scenario = spec::load_scenario(options.file);
    if (!scenario)
        return report_error(scenario.error());
    const fs::path cache = kernel::default_cache_dir();
    int fetched = 0;
    for (const core::Kernel& spec : scenario->kernels) {
        if (spec.source == core::KernelSource::git)
            continue;
        auto artifact = kernel::prebuilt(spec, cache, [&](const std::string& phase) {
            std::cout << "kernel " << spec.name << ": " << phase << "\n" << std::flush;
        });
        if (!artifact)
            return report_error(kernel::locate(artifact.error(), *scenario, spec));
        if (auto recorded = run::record_prebuilt(db, *artifact, spec); !recorded)
            return report_error(recorded.error());
        std::cout << "kernel " << spec.name << ": "
                  << (artifact->package.empty()
                          ? std::string("image")
                          : artifact->package + " " + artifact->package_version)
                  << ", release " << artifact->release << ", " << artifact->boot_image.string()
                  << "\n";
        ++fetched;
    }
    if (fetched == 0)
        return report_error(Error{
            ErrorKind::usage, options.file.string() + " has no Debian or image kernels to fetch"});
    return k_exit_ok;
}

int list_command(store::Database& db) {
    auto artifacts = db.kernel_artifacts();
    if (!artifacts)
        return report_error(artifacts.error());
    auto builds = db.kernel_builds();
    if (!builds)
        return report_error(builds.error());
    report::Table kernels({{"id", report::Align::right},
                           {"name"},
                           {"source"},
                           {"package"},
                           {"release"},
                           {"commit"},
                           {"config"},
                           {"created"},
                           {"image"}});
    for (const auto& artifact : *artifacts)
        kernels.add_row({std::to_string(artifact.id), artifact.name,
                         std::string(core::to_string(artifact.source)),
                         artifact.package.empty()
                             ? std::string("-")
                             : artifact.package + " " + artifact.package_version,
                         artifact.release, artifact.commit.substr(0, 12), artifact.config_hash,
                         artifact.created_at, artifact.image_path});
    std::cout << "kernel artifacts\n" << kernels.to_text();
    report::Table table({{"build", report::Align::right},
                         {"started"},
                         {"repository"},
                         {"commit"},
                         {"config"},
                         {"outcome"},
                         {"seconds", report::Align::right},
                         {"artifact", report::Align::right},
                         {"first error"}});
    for (const auto& build : *builds) {
        std::string first_error = build.error_lines.substr(0, build.error_lines.find('\n'));
        table.add_row({std::to_string(build.id), build.started_at,
                       fs::path(build.repo).filename().string(), build.commit.substr(0, 12),
                       build.config_hash, std::string(core::to_string(build.outcome)),
                       util::fixed(build.duration_seconds, 1),
                       build.artifact_id ? std::to_string(*build.artifact_id) : "-", first_error});
    }
    std::cout << "\ngit kernel builds\n" << table.to_text();
    return k_exit_ok;
}

int gc_command(store::Database& db, const KernelCommandOptions& options) {
    if (options.older_than_days < 0)
        return report_error(Error{ErrorKind::usage, "--older-than must not be negative"});
    auto hours = std::chrono::hours(static_cast<int64_t>(options.older_than_days * 24));
    auto result = run::collect_garbage(kernel::default_cache_dir(), db, hours);
    if (!result)
        return report_error(result.error());
    std::cout << "removed " << result->artifacts_removed << " git kernel artifacts and "
              << result->build_dirs_removed << " build folders, freed "
              << bytes_text(result->bytes_freed) << "\n";
    return k_exit_ok;
}

} // namespace

void add_kernel_command(CLI::App& app, KernelCommandOptions& options) {
    auto* kernel = app.add_subcommand("kernel", "build, fetch, list and collect kernels");
    kernel->require_subcommand(1);
    auto* build = kernel->add_subcommand(
        "build", "build every git kernel x config of a scenario (cached builds are not redone)");
    build->add_option("scenario", options.file, "scenario YAML file")->required();
    build->add_option("-j,--jobs", options.jobs, "parallel make jobs (default: every CPU)")
        ->check(CLI::NonNegativeNumber);
    build->callback([&options] { options.action = KernelAction::build; });
    auto* config = kernel->add_subcommand(
        "config", "resolve every git kernel x config of a scenario to its .config and check "
                  "each requested option, without building");
    config->add_option("scenario", options.file, "scenario YAML file")->required();
    config->callback([&options] { options.action = KernelAction::config; });
    auto* fetch = kernel->add_subcommand(
        "fetch", "fetch a scenario's Debian and image kernels into the cache and say which "
                 "package each Debian name resolved to, without booting");
    fetch->add_option("scenario", options.file, "scenario YAML file")->required();
    fetch->callback([&options] { options.action = KernelAction::fetch; });
    auto* list = kernel->add_subcommand("list", "list kernel artifacts and git kernel builds");
    list->callback([&options] { options.action = KernelAction::list; });
    auto* gc = kernel->add_subcommand(
        "gc", "remove git kernel artifacts and build folders that were not used recently");
    gc->add_option("--older-than", options.older_than_days,
                   "days without use before removal (default 30; 0 removes all)");
    gc->callback([&options] { options.action = KernelAction::gc; });
}

int kernel_command(const GlobalOptions& global, const KernelCommandOptions& options) {
    // Listing only reads: it must not leave a database behind.
    auto db = store::Database::open(global.db, options.action == KernelAction::list
                                                   ? store::Access::existing
                                                   : store::Access::create);
    if (!db)
        return report_error(db.error());
    switch (options.action) {
    case KernelAction::build:
        return build_command(**db, options);
    case KernelAction::config:
        return config_command(options);
    case KernelAction::fetch:
        return fetch_command(**db, options);
    case KernelAction::list:
        return list_command(**db);
    case KernelAction::gc:
        return gc_command(**db, options);
    case KernelAction::none:
        break;
    }
    return report_error(
        Error{ErrorKind::usage, "rig kernel needs build, config, fetch, list or gc"});
}

} // namespace rig::cli
