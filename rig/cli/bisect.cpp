// SPDX-License-Identifier: MIT
// `rig bisect`: parse, then hand over to bisect/.
#include "cli/bisect.hpp"

#include "bisect/report.hpp"
#include "kernel/artifact.hpp"
#include "run/batch.hpp"
#include "store/store.hpp"
#include "util/file.hpp"
#include "vm/qemu.hpp"

#include <CLI/CLI.hpp>
#include <atomic>
#include <iostream>

namespace rig::cli {

bisect::Settings bisect_settings(const GlobalOptions& global) {
    bisect::Settings settings;
    // Absolute: QEMU and virtiofsd resolve paths from their own cwd.
    settings.results_dir =
        std::filesystem::absolute(global.db.parent_path().empty() ? "." : global.db.parent_path());
    settings.cache_dir = kernel::default_cache_dir();
    settings.db = global.db;
    std::error_code ec;
    settings.program = std::filesystem::read_symlink("/proc/self/exe", ec);
    return settings;
}

namespace {

int exit_code_for(core::BisectStatus status) {
    switch (status) {
    case core::BisectStatus::culprit:
        return k_exit_ok;
    case core::BisectStatus::stopped:
        return k_exit_infra;
    case core::BisectStatus::interrupted:
        return k_exit_interrupted;
    default:
        return k_exit_failed;
    }
}

int run_and_report(store::Database& db, int64_t id, const bisect::Settings& settings) {
    const std::atomic<bool>& interrupted = catch_interrupts();
    wait_for_locks(db, interrupted);
    auto hypervisor = vm::make_qemu_hypervisor();
    auto status = bisect::run_bisect(id, db, *hypervisor, settings, interrupted, std::cout);
    if (!status)
        return report_error(status.error());
    if (*status == core::BisectStatus::culprit || *status == core::BisectStatus::unverified) {
        auto text = bisect::render_report(id, db, settings);
        if (!text)
            return report_error(text.error());
        std::cout << "\n" << *text;
    }
    return exit_code_for(*status);
}

} // namespace

void add_bisect_command(CLI::App& app, BisectCommandOptions& options) {
    auto* bisect = app.add_subcommand(
        "bisect", "bisect a kernel git tree to the commit that broke a cell, unattended");
    bisect->require_subcommand(1);

    auto* start = bisect->add_subcommand(
        "start", "check both endpoints, bisect with git, verify the culprit, report");
    auto& s = options.start;
    start->add_option("scenario", s.scenario, "scenario YAML file")->required();
    start->add_option("--cell", s.cell,
                      "the cell: id or id prefix, or KEY=VALUE[,KEY=VALUE] on kernel, config "
                      "and axes (fs, cache, msize, ...); needed only when the scenario has "
                      "more than one cell");
    start->add_option("--good", s.good, "a revision where the cell passes");
    start->add_option("--bad", s.bad, "a later revision where it fails");
    start->add_flag("--series", s.series,
                    "bisect over the patches of the kernel's posted series (its `series:`), "
                    "from its base to its last patch, instead of --good and --bad");
    start->add_option("--good-config", s.good_config,
                      "bisect the options instead, on the cell's commit: a config where it "
                      "passes, as fragment names (base,release) or a .config file");
    start->add_option("--bad-config", s.bad_config,
                      "the config where it fails; every option that differs is one step of "
                      "the line bisected, checked after olddefconfig");
    start->add_option(
        "--criterion", s.criterion,
        "errors (the bad endpoint's error families, held against GOOD's), signature:REGEX, "
        "duration[:+N%] (default threshold +10%), metric:NAME[:+N%|:-N%] "
        "(a sample metric such as 9p.work.getattr), output (the workload's outputs are not "
        "what they should be, or a coherency promise is broken: outcome wrong-output), or "
        "outcome:panic / outcome:hang "
        "(default errors)");
    start
        ->add_option("--samples", s.samples,
                     "samples at BAD (under errors, more while no error family stands in two), "
                     "and the least at GOOD and each verification (default 3)")
        ->check(CLI::Range(1, 100));
    start->add_option("--confidence", s.confidence,
                      "wanted confidence of a good verdict under errors/signature (default 0.95)");
    start
        ->add_option("--max-samples", s.max_samples,
                     "most samples per commit: the cap (errors, signature) or the budget of an "
                     "unsure duration or metric (default 10)")
        ->check(CLI::Range(2, 1000));
    start
        ->add_option("--infra-retries", s.infra_retries,
                     "infra errors in a row retried before the bisect stops (default 3)")
        ->check(CLI::Range(0, 100));
    start
        ->add_option("--max-builds", s.max_builds,
                     "the cost cap in kernel builds: reached, the bisect ends as capped "
                     "(default: none)")
        ->check(CLI::Range(1, 100000));
    start->add_option("--max-boots", s.max_boots, "the cost cap in guest boots (default: none)")
        ->check(CLI::Range(1, 1000000));
    start
        ->add_option("--max-hours", s.max_hours,
                     "the cost cap in hours of kernel builds and guests, summed (default: none)")
        ->check(CLI::Range(0.01, 10000.0));
    start->add_flag("--verify-revert", s.verify_revert,
                    "also revert the culprit on BAD and check that the cell passes");
    start
        ->add_option("--jobs,-j", s.jobs,
                     "a commit's samples at once, each guest on host CPUs of its own; a duration "
                     "or metric bisect also takes GOOD's and BAD's together (default: the "
                     "scenario's jobs, 1)")
        ->check(CLI::Range(1, 1024));
    start->add_flag("--multisection", s.multisection,
                    "with --jobs K, test K commits of the range at once, at its K-quantiles: "
                    "about log_(K+1) N rounds instead of log2 N steps, for K builds a round");
    auto* no_ahead = start->add_flag_callback(
        "--no-build-ahead", [&s] { s.build_ahead = false; },
        "a metric bisect builds the commits it may test next while a step's guests run, on "
        "cores no guest takes (counts do not move with the host's load), where the guests "
        "outlast two builds; this turns it off");
    start
        ->add_flag("--build-ahead", s.build_ahead_always,
                   "build ahead also where the guests are shorter than two builds: on a host "
                   "whose spare cores sit idle, a build stopped part way costs nothing else")
        ->excludes(no_ahead);
    start->callback([&options] { options.action = BisectAction::start; });

    auto* resume = bisect->add_subcommand("resume", "carry on with a stopped or killed bisect");
    resume->add_option("id", options.id, "bisect id")->required();
    resume->callback([&options] { options.action = BisectAction::resume; });

    auto* status = bisect->add_subcommand("status", "list bisects, or show one");
    status->add_option("id", options.id, "bisect id (default: all)");
    status->callback([&options] { options.action = BisectAction::status; });

    auto* report = bisect->add_subcommand(
        "report", "steps, culprit, confidence, cost and a summary for a mail");
    report->add_option("id", options.id, "bisect id")->required();
    report->add_option("--reply", options.reply,
                       "also write the report to FILE as an mbox reply to the cover letter of "
                       "the bisected series (`start --series`)");
    report->add_option("--from", options.from, "the reply's sender, \"Name <address>\"")
        ->capture_default_str();
    report->callback([&options] { options.action = BisectAction::report; });

    auto* log = bisect->add_subcommand("log", "print the replayable `git bisect log`");
    log->add_option("id", options.id, "bisect id")->required();
    log->callback([&options] { options.action = BisectAction::log; });
}

int bisect_command(const GlobalOptions& global, const BisectCommandOptions& options) {
    if (options.action == BisectAction::none)
        return report_error(Error{ErrorKind::usage, "rig bisect needs start, resume, status, "
                                                    "report or log"});
    // status, report and log only read.
    const bool writes =
        options.action == BisectAction::start || options.action == BisectAction::resume;
    auto db =
        store::Database::open(global.db, writes ? store::Access::create : store::Access::existing);
    if (!db)
        return report_error(db.error());
    bisect::Settings settings = bisect_settings(global);
    switch (options.action) {
    case BisectAction::start: {
        auto id = bisect::create_bisect(options.start, **db, settings, &std::cout);
        if (!id)
            return report_error(id.error());
        std::cout << "bisect " << *id << " created; `rig bisect resume " << *id
                  << "` carries on after a kill or a reboot\n";
        return run_and_report(**db, *id, settings);
    }
    case BisectAction::resume:
        return run_and_report(**db, options.id, settings);
    case BisectAction::status: {
        auto text = bisect::render_status(**db, options.id);
        if (!text)
            return report_error(text.error());
        std::cout << *text;
        return k_exit_ok;
    }
    case BisectAction::report: {
        auto text = bisect::render_report(options.id, **db, settings);
        if (!text)
            return report_error(text.error());
        std::cout << *text;
        if (!options.reply.empty()) {
            auto reply = bisect::series_reply(options.id, **db, settings, options.from,
                                              std::chrono::system_clock::now());
            if (!reply)
                return report_error(reply.error());
            if (auto written = util::write_file_atomically(options.reply, *reply); !written)
                return report_error(written.error());
            std::cout << "\nthe reply to the series' cover letter: " << options.reply << "\n";
        }
        return k_exit_ok;
    }
    case BisectAction::log: {
        auto text = bisect::bisect_log(options.id, **db, settings);
        if (!text)
            return report_error(text.error());
        std::cout << *text;
        return k_exit_ok;
    }
    case BisectAction::none:
        break;
    }
    return report_error(Error{ErrorKind::usage, "rig bisect needs start, resume, status, report "
                                                "or log"});
}

} // namespace rig::cli
