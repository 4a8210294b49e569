// SPDX-License-Identifier: MIT
// `rig watch`: the real tester and bisector behind watch/, and the loop of rounds.
#include "cli/watch.hpp"

#include "bisect/bisect.hpp"
#include "bisect/report.hpp"
#include "cli/bisect.hpp"
#include "cli/hosts.hpp"
#include "kernel/artifact.hpp"
#include "kernel/build.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "vm/qemu.hpp"
#include "watch/environment.hpp"
#include "watch/watch.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace rig::cli {

namespace {

// The scenario narrowed to the followed kernel at one commit, its text tagged with it: the
// tag makes the run's scenario hash that head's own, which is how a killed watcher finds
// the run it began.
core::Scenario head_scenario(const core::Scenario& scenario, const std::string& commit) {
    core::Scenario head = scenario;
    head.kernels.clear();
    for (const core::Kernel& kernel : scenario.kernels)
        if (kernel.name == scenario.watch->kernel) {
            head.kernels.push_back(kernel);
            head.kernels.back().ref = commit;
        }
    head.text += "\n# rig watch: kernel " + scenario.watch->kernel + " at " + commit + "\n";
    return head;
}

class RunTester final : public watch::Tester {
public:
    RunTester(const GlobalOptions& global, store::Database& db,
              const std::atomic<bool>& interrupted)
        : m_global(global), m_db(db), m_interrupted(interrupted) {}

    Expected<int64_t> test(const core::Scenario& scenario, const std::string& commit) override {
        core::Scenario head = head_scenario(scenario, commit);
        const std::string hash = util::sha256_hex(head.text);
        int64_t run_id = 0;
        for (const store::RunInfo& run : RIG_TRY(m_db.runs()))
            if (run.scenario_hash == hash) {
                if (run.status == core::RunStatus::finished)
                    return run.id;
                run_id = run.id;
            }
        RunCommandOptions options;
        Hypervisors hypervisors = RIG_TRY(choose_hypervisors(head, options));
        run::RunSettings settings = run_settings(m_global, head, options);
        settings.tty = false;
        run::RunSummary summary = RIG_TRY(run::run_scenario(head, m_db, hypervisors.hosts, settings,
                                                            run_id, m_interrupted, std::cout));
        if (summary.interrupted)
            return fail(ErrorKind::interrupted, "stopped while testing " + commit);
        return summary.run_id;
    }

private:
    const GlobalOptions& m_global;
    store::Database& m_db;
    const std::atomic<bool>& m_interrupted;
};

class RigBisector final : public watch::Bisector {
public:
    RigBisector(const GlobalOptions& global, store::Database& db, std::filesystem::path scenario,
                const std::atomic<bool>& interrupted)
        : m_db(db), m_settings(bisect_settings(global)), m_scenario(std::move(scenario)),
          m_interrupted(interrupted), m_hypervisor(vm::make_qemu_hypervisor()) {}

    Expected<int64_t> create(const watch::BisectRequest& request) override {
        bisect::StartOptions options;
        options.scenario = m_scenario;
        options.cell = request.cell;
        options.good = request.good;
        options.bad = request.bad;
        options.criterion = request.criterion;
        options.samples = request.samples;
        options.max_samples = request.max_samples;
        options.max_builds = request.max_builds;
        options.max_boots = request.max_boots;
        options.max_hours = request.max_hours;
        return bisect::create_bisect(options, m_db, m_settings);
    }

    Expected<watch::BisectEnd> run(int64_t id) override {
        core::BisectStatus status = RIG_TRY(
            bisect::run_bisect(id, m_db, *m_hypervisor, m_settings, m_interrupted, std::cout));
        auto info = RIG_TRY(m_db.bisect(id));
        return watch::BisectEnd{status, info ? info->culprit : "", info ? info->message : ""};
    }

    Expected<bisect::CulpritFinding> finding(int64_t id) override {
        return bisect::culprit_finding(id, m_db, m_settings);
    }

    Expected<std::string> log(int64_t id) override {
        return bisect::bisect_log(id, m_db, m_settings);
    }

    Expected<void> reproducer(int64_t id, const std::string& kernel_config,
                              const std::filesystem::path& tarball) override {
        return bisect::write_culprit_reproducer(id, m_db, m_settings, kernel_config, tarball);
    }

private:
    store::Database& m_db;
    bisect::Settings m_settings;
    std::filesystem::path m_scenario;
    const std::atomic<bool>& m_interrupted;
    std::unique_ptr<vm::Hypervisor> m_hypervisor;
};

// The .config of the build folder the commit's kernel was built in: the config it was
// built with, give or take what olddefconfig changed for a later commit of that folder.
std::string kernel_config(store::Database& db, const std::string& commit) {
    std::error_code ec;
    // Kept beside the kernel in the cache (kernel/build.cpp), whoever built it.
    if (auto artifacts = db.kernel_artifacts())
        for (const store::KernelArtifact& artifact : *artifacts) {
            std::filesystem::path config =
                std::filesystem::path(artifact.image_path).parent_path() / "config";
            if (artifact.commit == commit && std::filesystem::is_regular_file(config, ec))
                return util::read_file(config);
        }
    auto builds = db.kernel_builds();
    if (!builds)
        return "";
    const std::filesystem::path git = kernel::default_cache_dir() / "git";
    for (const store::KernelBuild& build : *builds) {
        if (build.commit != commit || build.outcome != core::BuildOutcome::ok)
            continue;
        for (const auto& repo : std::filesystem::directory_iterator(git, ec)) {
            std::filesystem::path config =
                kernel::build_folder(repo.path(), build.config_hash) / ".config";
            if (std::filesystem::is_regular_file(config, ec))
                return util::read_file(config);
        }
    }
    return "";
}

int exit_code_for(const watch::RoundResult& result) {
    if (result.end == watch::RoundEnd::interrupted)
        return k_exit_interrupted;
    if (result.reports > 0 || result.status == core::HeadStatus::bad ||
        result.status == core::HeadStatus::suspect)
        return k_exit_failed;
    return k_exit_ok;
}

// Sleeps until the next round in short steps, so that SIGTERM ends the wait at once.
void wait_for_next_round(std::chrono::seconds interval, const std::atomic<bool>& interrupted) {
    auto until = std::chrono::steady_clock::now() + interval;
    while (!interrupted && std::chrono::steady_clock::now() < until)
        util::real_clock().sleep_for(std::chrono::milliseconds(200));
}

} // namespace

void add_watch_command(CLI::App& app, WatchCommandOptions& options) {
    auto* watch = app.add_subcommand(
        "watch", "test every new head of a branch, bisect what regressed, mail the report");
    watch->add_option("scenario", options.file, "scenario YAML file with a watch: section");
    watch->add_flag("--once", options.once, "one round, then exit (for cron and timers)");
    watch->callback([&options] { options.chosen = true; });
    auto* status = watch->add_subcommand("status", "heads tested, verdicts, regressions");
    status->callback([&options] { options.status = true; });
}

int watch_command(const GlobalOptions& global, const WatchCommandOptions& options) {
    if (options.status) {
        auto db = store::Database::open(global.db, store::Access::existing);
        if (!db)
            return report_error(db.error());
        auto text = watch::render_status(**db);
        if (!text)
            return report_error(text.error());
        std::cout << *text;
        return k_exit_ok;
    }
    if (options.file.empty())
        return report_error(Error{ErrorKind::usage, "rig watch needs a scenario file (or status)"});
    auto scenario = spec::load_scenario(options.file);
    if (!scenario)
        return report_error(scenario.error());
    if (!scenario->watch)
        return report_error(Error{ErrorKind::usage, options.file.string() +
                                                        ": the scenario has no watch: section "
                                                        "(scenarios/README.md, `watch`)"});
    auto db = store::Database::open(global.db);
    if (!db)
        return report_error(db.error());
    const std::atomic<bool>& interrupted = catch_interrupts();
    wait_for_locks(**db, interrupted);
    RunTester tester(global, **db, interrupted);
    RigBisector bisector(global, **db, std::filesystem::absolute(options.file), interrupted);
    watch::Settings settings;
    settings.tester = &tester;
    settings.bisector = &bisector;
    store::Database& database = **db;
    settings.environment = [&database](int64_t run_id) -> Expected<std::string> {
        auto run = RIG_TRY(database.run(run_id));
        if (!run)
            return fail(ErrorKind::infra, "no run " + std::to_string(run_id) + " in the database");
        return watch::environment_of(*run);
    };
    settings.kernel_config = [&database](const std::string& commit) {
        return kernel_config(database, commit);
    };
    while (true) {
        auto result = watch::run_round(*scenario, database, settings, interrupted, std::cout);
        if (!result) {
            if (options.once || result.error().kind != ErrorKind::infra)
                return report_error(result.error());
            // A watcher outlives a network or a disk that failed once: it says so and tries
            // again next round.
            std::cout << util::utc_text(util::real_clock().wall_now())
                      << " round failed: " << result.error().message << "\n";
        } else if (options.once || result->end == watch::RoundEnd::interrupted) {
            return options.once ? exit_code_for(*result) : k_exit_ok;
        }
        wait_for_next_round(scenario->watch->interval, interrupted);
        if (interrupted)
            return k_exit_ok;
    }
}

} // namespace rig::cli
