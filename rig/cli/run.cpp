// SPDX-License-Identifier: MIT
// `rig run`: load or resume, run, store, print the table.
#include "cli/commands.hpp"
#include "cli/hosts.hpp"
#include "kernel/artifact.hpp"
#include "report/invalidation.hpp"
#include "report/results.hpp"
#include "run/batch.hpp"
#include "run/runner.hpp"
#include "run/worker.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"
#include "util/hash.hpp"
#include "vm/libvirt.hpp"
#include "vm/qemu.hpp"

#include <atomic>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace rig::cli {

namespace {

struct Loaded {
    core::Scenario scenario;
    int64_t run_id = 0;
    RunCommandOptions options; // the command line's, with a resumed run's as it started
};

// A resume carries on as its run started: with the --backend, --uri and --jobs given
// then, except where today's command line gives its own.
RunCommandOptions as_started(RunCommandOptions options, const store::RunInfo& run) {
    if (!options.backend)
        options.backend = run.backend;
    if (options.uris.empty() &&
        options.backend.value_or(core::Backend::libvirt) == core::Backend::libvirt)
        options.uris = run.uris;
    if (options.jobs == 0)
        options.jobs = run.jobs;
    return options;
}

// A new run's scenario, read and checked before the database is opened: one that fails
// leaves no database behind.
Expected<core::Scenario> load_new_scenario(const RunCommandOptions& options) {
    if (options.file.empty())
        return fail(ErrorKind::usage, "rig run needs a scenario file (or --resume)");
    return spec::load_scenario(options.file);
}

// `checked`: a new run's scenario, from load_new_scenario.
Expected<Loaded> load_for_run(store::Database& db, const RunCommandOptions& options,
                              std::optional<core::Scenario> checked) {
    if (!options.resume)
        return Loaded{std::move(*checked), 0, options};
    std::optional<store::RunInfo> run;
    if (options.resume_run != 0) {
        run = RIG_TRY(db.run(options.resume_run));
        if (!run)
            return fail(ErrorKind::usage,
                        "no run " + std::to_string(options.resume_run) + " in the database");
    } else {
        std::string hash;
        if (!options.file.empty()) {
            auto scenario = RIG_TRY(spec::load_scenario(options.file));
            hash = util::sha256_hex(scenario.text);
        }
        run = RIG_TRY(db.last_unfinished_run(hash));
        if (!run)
            return fail(ErrorKind::usage,
                        "no unfinished run to resume" + (options.file.empty()
                                                             ? std::string()
                                                             : " for " + options.file.string()));
    }
    // The stored text, not today's file: a resumed run is the same matrix.
    auto scenario = RIG_TRY(spec::parse_scenario(run->scenario_text, run->scenario_file));
    return Loaded{std::move(scenario), run->id, as_started(options, *run)};
}

} // namespace

int run_command(const GlobalOptions& global, const RunCommandOptions& given) {
    std::optional<core::Scenario> checked;
    if (!given.resume) {
        auto scenario = load_new_scenario(given);
        if (!scenario)
            return report_error(scenario.error());
        checked = std::move(*scenario);
    }
    // A resume's database holds its run already: it is never created.
    auto db = store::Database::open(global.db,
                                    given.resume ? store::Access::existing : store::Access::create);
    if (!db)
        return report_error(db.error());
    auto loaded = load_for_run(**db, given, std::move(checked));
    if (!loaded)
        return report_error(loaded.error());

    const RunCommandOptions& options = loaded->options;
    auto hypervisors = choose_hypervisors(loaded->scenario, options);
    if (!hypervisors)
        return report_error(hypervisors.error());

    const std::atomic<bool>& interrupted = catch_interrupts();
    wait_for_locks(**db, interrupted);
    run::RunSettings settings = run_settings(global, loaded->scenario, options);
    auto summary = run::run_scenario(loaded->scenario, **db, hypervisors->hosts, settings,
                                     loaded->run_id, interrupted, std::cout);
    if (!summary)
        return report_error(summary.error());

    // The run's stored cells: what ran, whatever the scenario file says today.
    auto cells = (*db)->cells(summary->run_id);
    if (!cells)
        return report_error(cells.error());
    auto samples = (*db)->samples(summary->run_id);
    if (!samples)
        return report_error(samples.error());
    std::cout << "\n"
              << loaded->scenario.name << ", run " << summary->run_id << " (" << global.db.string()
              << ")\n\n"
              << report::render_results(*cells, *samples);
    if (std::string table = report::render_invalidation(*cells, *samples); !table.empty())
        std::cout << "\n" << table;
    if (summary->interrupted) {
        std::cout << "\ninterrupted: resume with `rig run --resume " << summary->run_id << "`\n";
        return k_exit_interrupted;
    }
    return summary->samples_not_ok > 0 ? k_exit_failed : k_exit_ok;
}

int sample_command(const std::filesystem::path& job_file) {
    auto job = run::read_job(job_file);
    if (!job)
        return report_error({ErrorKind::usage, job.error().message});
    // scancel and a time limit send SIGTERM: the sample ends as aborted, with a record.
    const std::atomic<bool>& interrupted = catch_interrupts();
    auto sample = run::run_job(*job, interrupted);
    if (!sample)
        return report_error(sample.error());
    std::cout << job->cell.cell.id << " rep " << job->repetition << ": "
              << core::to_string(sample->outcome) << " in "
              << static_cast<int>(sample->total_seconds) << " s; record " << job->record.string()
              << "\n";
    switch (sample->outcome) {
    case core::Outcome::ok:
        return k_exit_ok;
    case core::Outcome::infra_error:
        return k_exit_infra;
    case core::Outcome::aborted:
        return k_exit_interrupted;
    default:
        return k_exit_failed;
    }
}

} // namespace rig::cli
