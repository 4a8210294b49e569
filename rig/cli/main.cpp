// SPDX-License-Identifier: MIT
// rig's entry point: parse the command line, then hand over to one subcommand.
#include "cli/bisect.hpp"
#include "cli/commands.hpp"
#include "cli/complete.hpp"
#include "cli/kernel.hpp"
#include "cli/report.hpp"
#include "cli/reproduce.hpp"
#include "cli/watch.hpp"
#include "rig_config.hpp"
#include "run/share_mount.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <map>

namespace {

using namespace rig::cli;

std::filesystem::path default_db() {
    if (const char* env = std::getenv("RIG_DB"); env && *env)
        return env;
    return "rig-results/rig.db";
}

// `rig run` and its options; the --resume option, whose count says whether it was given.
std::pair<CLI::App*, CLI::Option*> add_run_command(CLI::App& app, RunCommandOptions& options) {
    auto* run = app.add_subcommand("run", "run every cell of a scenario in QEMU guests");
    run->add_option("scenario", options.file, "scenario YAML file (optional with --resume)");
    auto* resume = run->add_option("--resume", options.resume_run,
                                   "continue an interrupted run (the newest unfinished one "
                                   "when RUN is not given); finished samples are kept")
                       ->expected(0, 1);
    // IsMember runs before the function, so the parse cannot fail there.
    run->add_option_function<std::string>(
           "--backend",
           [&options](const std::string& name) {
               options.backend = *rig::core::parse_backend(name);
           },
           "qemu, libvirt or slurm, instead of the scenario's backend")
        ->check(CLI::IsMember(rig::core::backend_words()));
    run->add_option("--uri", options.uris,
                    "libvirt URI, instead of the scenario's uri and hosts; give it more "
                    "than once to spread the cells over several hosts")
        ->allow_extra_args(false);
    run->add_option("--jobs,-j", options.jobs,
                    "guests at once per host, each pinned to host CPUs of its own, instead "
                    "of the scenario's jobs (default 1)")
        ->check(CLI::Range(1, 1024));
    return {run, resume};
}

} // namespace

int main(int argc, char** argv) {
    // Before any thread: the share mounts of this rig die with it (run/share_mount.hpp).
    rig::run::enter_private_mounts();
    CLI::App app{"rig: regression hunting for Linux filesystem caching across kernel builds"};
    app.set_version_flag("--version", RIG_VERSION);
    app.require_subcommand(1);

    GlobalOptions global;
    global.db = default_db();
    app.add_option("--db", global.db, "results database (default: $RIG_DB or rig-results/rig.db)");
    // Global options may also follow the subcommand (`rig bisect start s.yaml --db x`):
    // subcommands made below inherit this and hand what they do not know to their parent.
    app.fallthrough();

    std::filesystem::path plan_file;
    rig::report::PlanFormat plan_format = rig::report::PlanFormat::text;
    auto* plan = app.add_subcommand("plan", "print the cells a scenario expands to");
    plan->add_option("scenario", plan_file, "scenario YAML file")->required();
    plan->add_option("--format", plan_format, "text or json")
        ->transform(CLI::CheckedTransformer(rig::cli::plan_format_words()));

    RunCommandOptions run_options;
    auto [run, resume] = add_run_command(app, run_options);

    std::filesystem::path job_file;
    auto* sample = app.add_subcommand(
        "sample", "run the one sample a job file describes and write its record (the worker "
                  "of backend slurm; it never opens the database)");
    sample->add_option("jobfile", job_file, "job file written by the coordinator")->required();

    auto* doctor = app.add_subcommand("doctor", "check QEMU, KVM, virtiofsd, busybox, tools, disk");

    ReportCommandOptions report_options;
    auto* report =
        app.add_subcommand("report", "print comparison tables from the results database");
    add_report_options(*report, report_options);

    KernelCommandOptions kernel_options;
    add_kernel_command(app, kernel_options);

    BisectCommandOptions bisect_options;
    add_bisect_command(app, bisect_options);

    WatchCommandOptions watch_options;
    add_watch_command(app, watch_options);

    ReproduceCommandOptions reproduce_options;
    auto* reproduce = add_reproduce_command(app, reproduce_options);

    // Hidden (no group): completion/rig's question, `rig complete -- WORD...`; after `--`
    // every word is one of the command line's, options too.
    std::vector<std::string> complete_words;
    auto* complete = app.add_subcommand("complete", "what the shell may offer for a command line");
    complete->group("");
    complete->add_option("words", complete_words, "the command line after rig, up to the word");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        int code = app.exit(error);
        return code == 0 ? k_exit_ok : k_exit_usage;
    }

    if (*complete)
        return complete_command(app, global, complete_words);
    if (*plan)
        return plan_command(global, plan_file, plan_format);
    if (*sample)
        return sample_command(job_file);
    if (*doctor)
        return doctor_command(global);
    if (kernel_options.action != KernelAction::none)
        return kernel_command(global, kernel_options);
    if (*report)
        return report_command(global, report_options);
    if (bisect_options.action != BisectAction::none)
        return bisect_command(global, bisect_options);
    if (watch_options.chosen || watch_options.status)
        return watch_command(global, watch_options);
    if (*reproduce)
        return reproduce_command(global, reproduce_options);
    if (*run) {
        run_options.resume = resume->count() > 0;
        return run_command(global, run_options);
    }
    return k_exit_usage;
}
