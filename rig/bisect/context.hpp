// SPDX-License-Identifier: MIT
// What the bisect's driver and its report share: one bisect loaded from the store, its
// steps and samples, and the computations both make from them.
#pragma once

#include "bisect/builder.hpp"
#include "bisect/config_line.hpp"
#include "bisect/history.hpp"
#include "bisect/settings.hpp"
#include "bisect/verdict.hpp"
#include "core/cell.hpp"
#include "core/cpu_set.hpp"
#include "core/sample.hpp"
#include "core/scenario.hpp"
#include "guest/root.hpp"
#include "run/cells.hpp"
#include "store/store.hpp"
#include "util/strings.hpp"
#include "vm/hypervisor.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rig::bisect {

using util::short_sha;

// Everything a bisect's steps share, loaded once per `run_bisect` or report.
struct Context {
    store::Database& db;
    const Settings& settings;
    store::BisectInfo info;
    StartOptions options;
    Criterion criterion;
    core::Scenario scenario;
    core::Cell cell;
    std::filesystem::path scenario_dir;
    std::filesystem::path repo;
    std::unique_ptr<History> history; // bisected in results_dir/bisects/<id>/git
    std::vector<store::BisectStep> steps;
    std::map<std::string, std::vector<core::Sample>> samples_by_cell;
    std::unique_ptr<vm::Hypervisor> libvirt; // backend libvirt: the scenario's daemon
    // --jobs: the host CPU sets guests run on at once, one each; empty: one at a time.
    std::vector<core::CpuSet> cpu_sets;
    // Builds the commits: Settings::builder, or the real one the context owns.
    CommitBuilder* builder = nullptr;
    std::shared_ptr<CommitBuilder> own_builder = nullptr;
    // Host CPUs no guest of a step takes: what builds ahead may use (make -j that many).
    int spare_cpus = 0;
    // The accelerator the guests get, chosen once when the driver starts.
    core::Accelerator accel = core::Accelerator::tcg;
    // What the guests see of this host (guest/root.hpp), made once when the driver starts.
    guest::GuestRoot root = {};
    // --series: the commits made of the series' patches on GOOD, in order (series_line),
    // and the cell's record, whose kernel applies its own patches and then the series'.
    std::vector<std::string> series_commits = {};
    core::CellRecord record = {};
    // --good-config/--bad-config: the line's switches and its commits on the cell's commit
    // (bisect/config_line.hpp), and GOOD's .config, which every step starts from.
    std::vector<ConfigSwitch> switches = {};
    std::vector<std::string> config_commits = {};
    kernel::ConfigValues good_config = {};
};

// The series of `record` (a cell with its series applied) as commits on its base in
// `history`: what a series bisect bisects.
Expected<std::vector<std::string>> series_line(History& history, const core::CellRecord& record);

// How many of the series' patches the commit `sha` of a series bisect has applied (0 for
// the base); nullopt for a commit not on the series' line.
std::optional<size_t> series_patches_at(const Context& context, const std::string& sha);

// A config bisect's line (`options`' two .configs) as commits on the cell's commit in
// `history`, and its switches.
Expected<std::pair<std::vector<ConfigSwitch>, std::vector<std::string>>>
config_line(History& history, const core::CellRecord& record, const StartOptions& options);

// How many switches the commit `sha` of a config bisect has made (0 for the cell's
// commit); nullopt for a commit not on the line.
std::optional<size_t> switches_at(const Context& context, const std::string& sha);

Expected<Context> load(int64_t id, store::Database& db, const Settings& settings);

// The history of `repo` bisected in `dir`, as the settings open it (git's by default).
Expected<std::unique_ptr<History>> open_history(const Settings& settings,
                                                const std::filesystem::path& dir,
                                                const std::filesystem::path& repo);
// Freezing a cell of the bisected kernel resolves its ref in `history` (run::freeze).
run::ResolveRef resolve_in(const History& history);

// Where the bisect's samples keep their folders (`that / CELL / REPETITION`).
std::filesystem::path samples_dir(const Context& context);

// The first stored step of `role` (at `commit`, unless empty), or null.
const store::BisectStep* find_step(const Context& context, core::StepRole role,
                                   const std::string& commit = "");
std::vector<core::Sample> samples_of(const Context& context, const store::BisectStep& step);
// The values of a duration or metric step's usable samples.
std::vector<double> values_of(const Context& context, const std::vector<core::Sample>& samples);

// Duration and metric criteria compare a number per sample against the endpoints'.
bool compares_values(const Criterion& criterion);

// git's bisect started afresh and fed the verdicts of the stored bisect steps.
Expected<GitState> replay(Context& context);

// Tells git a bisect step's verdict, given where the bisect stands (`state`). The commit
// git asked for always; another of a multisection round only while it is still open
// (bisect/multisect.hpp): nullopt when it no longer is.
Expected<std::optional<GitState>> mark_if_open(Context& context, const GitState& state,
                                               core::Verdict verdict, const std::string& sha);

// How often the BAD endpoint's samples show the regression.
struct Reproduction {
    int reproduced = 0;
    int usable = 0; // neither hung, panicked, infra nor aborted
};
Reproduction count_reproduction(const Criterion& criterion,
                                const std::vector<core::Sample>& samples, const ErrorModel& model);

// The `errors` criterion's model of the stored endpoints: the driver's, remade the same
// way for every resume and report.
ErrorModel endpoint_model(const Context& context);

// What a bisect has cost so far: kernels it built, guests it booted, and their time.
struct Cost {
    size_t builds = 0;
    double build_seconds = 0;
    size_t boots = 0;
    double guest_seconds = 0; // each sample's whole host wall time, boot to exit
};
Expected<Cost> cost_of(const Context& context);

// Which part of the options' cost cap `cost` has reached, said as "6 kernel builds of at
// most 6"; none while every part is below its cap (or has none).
std::optional<std::string> cap_reached(const StartOptions& options, const Cost& cost);

// How many commits a round of the bisect tests: one, or with --multisection its guest
// slots (--jobs, else the scenario's; Slurm's tasks have none, so one).
size_t round_size(const Context& context);

// The most builds a bisect of `commits` commits takes, skips aside, with rounds of
// `round`: ceil(log2 n) + 2 one at a time, k * ceil(log_(k+1) n) + 2 in rounds of k.
int build_bound(size_t commits, size_t round = 1);
// The same, as the report says it: "ceil(log2 7) + 2 = 5".
std::string build_bound_text(size_t commits, size_t round = 1);

// A step's build as the table shows it: "cached", "52 s", "failed, 12 s", or "-".
std::string build_label(const store::BisectStep& step);

} // namespace rig::bisect
