// SPDX-License-Identifier: MIT
// What a bisect is started with, stored with it for every resume, and the `--cell` filter
// that picks its one cell.
#pragma once

#include "bisect/history.hpp"
#include "core/cell.hpp"
#include "host/probe.hpp"
#include "run/sample.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"
#include "util/fields.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rig::bisect {

class CommitBuilder;

struct StartOptions {
    std::filesystem::path scenario;
    std::string cell; // cell id or prefix, or key=value[,key=value] on kernel/config/axes
    std::string good; // any revision of the kernel's repository
    std::string bad;
    std::string criterion = "errors";
    int samples = 3;            // at each endpoint and for each verification
    double confidence = 0.95;   // of a good verdict (functional criteria)
    int max_samples = 10;       // per commit: the cap (functional) or budget (duration)
    int infra_retries = 3;      // infra errors in a row before the bisect stops
    bool verify_revert = false; // also revert the culprit on BAD and check that it passes
    int jobs = 0;               // guests at once, each on its own CPUs; 0: the scenario's
    bool multisection = false;  // with jobs > 1, that many commits a round (bisect/multisect)
    // A metric bisect builds the commits it may test next while a step's guests run
    // (bisect/multisect.hpp next_after): counts do not move with the host's load.
    bool build_ahead = true;
    // And also where a step's guests are shorter than two builds (bisect.cpp
    // builds_ahead_pay): a host whose spare cores would sit idle loses only a build that
    // is stopped part way.
    bool build_ahead_always = false;
    // Over the patches of the kernel's posted series (its `series:`), on the cell with the
    // series applied: GOOD is the base, BAD the last patch; good and bad are not given.
    bool series = false;
    // Over the options that differ between two configs of the cell's commit (each a list of
    // fragment names, "base,debug", or a .config file whose every value is a wish):
    // bisect/config_line.hpp. good and bad are not given.
    std::string good_config;
    std::string bad_config;
    // Their .configs as olddefconfig resolved them when the bisect began, stored so that
    // every resume walks the same line.
    std::string good_dot_config;
    std::string bad_dot_config;
    // The cost cap, each 0 for none: reached before the next commit is measured, it ends
    // the bisect as capped, with the range it had narrowed down to.
    int max_builds = 0;
    int max_boots = 0;
    double max_hours = 0; // kernel builds and guests (each boot to exit), summed
};

// The settings every resume uses, declared once (util/fields.hpp): stored with the bisect
// as JSON of these fields. good, bad and criterion are the bisect's own columns.
template <util::RecordOf<StartOptions> Options, class Visit>
void fields(Options& options, Visit&& visit) {
    visit("scenario", options.scenario);
    visit("cell", options.cell);
    visit("samples", options.samples);
    visit("confidence", options.confidence);
    visit("max_samples", options.max_samples);
    visit("infra_retries", options.infra_retries);
    visit("verify_revert", options.verify_revert);
    visit("jobs", options.jobs);
    visit("multisection", options.multisection);
    visit("build_ahead", options.build_ahead);
    visit("build_ahead_always", options.build_ahead_always);
    visit("series", options.series);
    visit("good_config", options.good_config);
    visit("bad_config", options.bad_config);
    visit("good_dot_config", options.good_dot_config);
    visit("bad_dot_config", options.bad_dot_config);
    visit("max_builds", options.max_builds);
    visit("max_boots", options.max_boots);
    visit("max_hours", options.max_hours);
}

std::string encode_settings(const StartOptions& options);
// Also reads the key=value lines bisects stored before the settings were JSON.
Expected<StartOptions> decode_settings(const std::string& text);

// The one cell of `cells` that `filter` names, or a usage error listing the candidates.
Expected<size_t> select_cell(const std::vector<core::Cell>& cells, const std::string& filter);

struct Settings {
    // results_dir/bisects/<id> (core::results_folder: bisects/ for rig.db, FILE.bisects/
    // for another database FILE): sample logs, rig's git repository.
    std::filesystem::path results_dir;
    std::filesystem::path cache_dir; // kernels and initramfs images
    // The database, which names the bisects' folder (above). Where samples run follows
    // the scenario's backend. slurm: each sample is a batch job (run/batch.hpp) whose jobs
    // are named after `db`; `program` is rig's binary on the nodes.
    std::filesystem::path db;
    std::filesystem::path program;
    // Builds the commits; null: kernel::build_git into cache_dir (make_commit_builder).
    // Unit tests hand in a fake.
    CommitBuilder* builder = nullptr;
    // Opens the kernel's history; null: git's own bisect (GitBisect::open_history). Unit
    // tests hand in a history held in memory.
    OpenHistory history;
    // How often a sample looks at its guest; unit tests of fake guests poll faster.
    run::Pacing pacing;
    // The host's facts and accelerator, asked once per create and once per run of the
    // bisect; unit tests give a fake.
    host::Probe* probe = &host::local_probe();
    // What the run's start time and the Slurm polls read; unit tests give a fake.
    util::Clock* clock = &util::real_clock();
};

// The folder of this database's bisects under `root` (results_dir unless given: backend
// slurm's shared folder); bisect N keeps its lock, inputs, git state and samples in
// `that / N` (core::results_folder).
std::filesystem::path bisects_folder(const Settings& settings,
                                     const std::filesystem::path& root = {});

} // namespace rig::bisect
