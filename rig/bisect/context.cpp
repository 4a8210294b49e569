// SPDX-License-Identifier: MIT
// One bisect loaded from the store, and what its driver and report both compute from it.
#include "bisect/context.hpp"

#include "bisect/git.hpp"
#include "bisect/multisect.hpp"
#include "core/matrix.hpp"
#include "run/cells.hpp"
#include "spec/spec.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace rig::bisect {

namespace fs = std::filesystem;

namespace {

// The bisected cell as stored when the bisect began; a bisect begun before cells were
// stored finds its cell in its stored scenario, and freezes it now.
Expected<core::CellRecord> stored_cell(const store::BisectInfo& info,
                                       const core::Scenario& scenario) {
    const std::string what = "bisect " + std::to_string(info.id);
    if (!info.cell_record.empty())
        return core::decode_cell_record(info.cell_record, what);
    auto cells = RIG_TRY(core::expand(scenario));
    auto found = std::find_if(cells.begin(), cells.end(),
                              [&](const core::Cell& cell) { return cell.id == info.cell_id; });
    if (found == cells.end())
        return fail(ErrorKind::infra, what + ": cell " + info.cell_id + " is not in its scenario");
    return RIG_TRY(run::freeze(scenario, {*found})).front();
}

} // namespace

Expected<Context> load(int64_t id, store::Database& db, const Settings& settings) {
    auto info = RIG_TRY(db.bisect(id));
    if (!info)
        return fail(ErrorKind::usage, "no bisect " + std::to_string(id) + " in the database");
    auto run = RIG_TRY(db.run(info->run_id));
    if (!run)
        return fail(ErrorKind::infra, "bisect " + std::to_string(id) + " has lost its run");
    // The stored cell, not today's file: a resumed bisect tests the same cell.
    auto settings_of_run = RIG_TRY(spec::parse_scenario(run->scenario_text, run->scenario_file));
    core::CellRecord record = RIG_TRY(stored_cell(*info, settings_of_run));
    run::Thawed thawed =
        RIG_TRY(run::thaw(std::move(settings_of_run), {record},
                          bisects_folder(settings) / std::to_string(id) / "inputs"));
    Context context{db,
                    settings,
                    *info,
                    RIG_TRY(decode_settings(info->state)),
                    RIG_TRY(parse_criterion(info->criterion)),
                    thawed.scenario,
                    thawed.cells.front(),
                    thawed.scenario.dir,
                    {},
                    nullptr,
                    RIG_TRY(db.bisect_steps(id)),
                    {},
                    nullptr,
                    {},
                    nullptr,
                    nullptr};
    context.repo = thawed.scenario.kernels.front().repo;
    if (settings.builder) {
        context.builder = settings.builder;
    } else {
        context.own_builder = make_commit_builder(settings.cache_dir, db);
        context.builder = context.own_builder.get();
    }
    context.history = RIG_TRY(open_history(
        settings, bisects_folder(settings) / std::to_string(id) / "git", context.repo));
    if (context.options.series)
        context.series_commits = RIG_TRY(series_line(*context.history, record));
    if (!context.options.good_config.empty()) {
        std::tie(context.switches, context.config_commits) =
            RIG_TRY(config_line(*context.history, record, context.options));
        context.good_config = kernel::parse_config(context.options.good_dot_config);
    }
    context.record = std::move(record);
    for (core::Sample& sample : RIG_TRY(db.samples(info->run_id)))
        context.samples_by_cell[sample.cell_id].push_back(std::move(sample));
    return context;
}

Expected<std::vector<std::string>> series_line(History& history, const core::CellRecord& record) {
    if (record.series.empty())
        return fail(ErrorKind::infra, "cell " + record.cell.id + " applies no series");
    std::vector<std::string> patches;
    for (const core::StoredFile& patch : record.series)
        patches.push_back(patch.text);
    return history.commit_series(record.commit, patches);
}

namespace {

// How far along `line` (commits on `base`) the commit `sha` is: 0 for the base.
std::optional<size_t> position_on(const std::string& base, const std::vector<std::string>& line,
                                  const std::string& sha) {
    if (sha == base)
        return 0;
    auto found = std::find(line.begin(), line.end(), sha);
    if (found == line.end())
        return std::nullopt;
    return static_cast<size_t>(found - line.begin()) + 1;
}

} // namespace

std::optional<size_t> series_patches_at(const Context& context, const std::string& sha) {
    return position_on(context.record.commit, context.series_commits, sha);
}

Expected<std::pair<std::vector<ConfigSwitch>, std::vector<std::string>>>
config_line(History& history, const core::CellRecord& record, const StartOptions& options) {
    std::vector<ConfigSwitch> switches =
        config_switches(kernel::parse_config(options.good_dot_config),
                        kernel::parse_config(options.bad_dot_config));
    if (switches.empty())
        return fail(ErrorKind::usage, "--good-config " + options.good_config +
                                          " and --bad-config " + options.bad_config +
                                          " resolve to the same .config: nothing to bisect");
    auto commits = RIG_TRY(history.commit_series(
        record.commit,
        config_line_mails(switches, "from " + options.good_config + " to " + options.bad_config)));
    return std::pair{std::move(switches), std::move(commits)};
}

std::optional<size_t> switches_at(const Context& context, const std::string& sha) {
    return position_on(context.record.commit, context.config_commits, sha);
}

Expected<std::unique_ptr<History>> open_history(const Settings& settings, const fs::path& dir,
                                                const fs::path& repo) {
    return settings.history ? settings.history(dir, repo) : GitBisect::open_history(dir, repo);
}

run::ResolveRef resolve_in(const History& history) {
    return [&history](const fs::path&, const std::string& ref) -> Expected<std::string> {
        auto sha = history.resolve(ref);
        if (!sha && sha.error().kind == ErrorKind::usage)
            return fail(ErrorKind::config, sha.error().message);
        return sha;
    };
}

// backend slurm keeps samples where every node sees them: the scenario's shared folder.
std::filesystem::path samples_dir(const Context& context) {
    const std::string& shared = context.scenario.slurm.shared;
    std::filesystem::path root = context.scenario.backend == core::Backend::slurm && !shared.empty()
                                     ? std::filesystem::path(shared)
                                     : context.settings.results_dir;
    return bisects_folder(context.settings, root) / std::to_string(context.info.id);
}

const store::BisectStep* find_step(const Context& context, core::StepRole role,
                                   const std::string& commit) {
    for (const auto& step : context.steps)
        if (step.role == role && (commit.empty() || step.commit == commit))
            return &step;
    return nullptr;
}

std::vector<core::Sample> samples_of(const Context& context, const store::BisectStep& step) {
    std::vector<core::Sample> out;
    auto found = context.samples_by_cell.find(step.cell_id);
    if (found == context.samples_by_cell.end())
        return out;
    for (int64_t id : step.samples)
        for (const auto& sample : found->second)
            if (sample.id == id)
                out.push_back(sample);
    return out;
}

// The values of a duration or metric step's usable samples.
std::vector<double> values_of(const Context& context, const std::vector<core::Sample>& samples) {
    std::vector<double> out;
    for (const auto& sample : samples)
        if (classify_sample(context.criterion, sample, {}) == SampleClass::clean)
            out.push_back(*measured_value(context.criterion, sample));
    return out;
}

bool compares_values(const Criterion& criterion) {
    return criterion.kind == CriterionKind::duration || criterion.kind == CriterionKind::metric;
}

Expected<GitState> replay(Context& context) {
    GitState state = RIG_TRY(context.history->start(context.info.bad, context.info.good));
    for (const auto& step : context.steps)
        if (step.role == core::StepRole::bisect && !state.done)
            if (auto marked = RIG_TRY(mark_if_open(context, state, step.verdict, step.commit)))
                state = *marked;
    return state;
}

Expected<std::optional<GitState>> mark_if_open(Context& context, const GitState& state,
                                               core::Verdict verdict, const std::string& sha) {
    // git chose every commit of a binary bisect itself, and a merge base it wants tested
    // may lie outside what is left: told without a question.
    if (context.options.multisection && sha != state.next &&
        !still_open(RIG_TRY(context.history->remaining()), sha))
        return std::optional<GitState>();
    return std::optional<GitState>(RIG_TRY(context.history->mark(verdict, sha)));
}

Reproduction count_reproduction(const Criterion& criterion,
                                const std::vector<core::Sample>& samples, const ErrorModel& model) {
    Reproduction out;
    for (const auto& sample : samples) {
        SampleClass value = classify_sample(criterion, sample, model);
        out.reproduced += value == SampleClass::reproduces;
        out.usable += value == SampleClass::reproduces || value == SampleClass::clean ||
                      value == SampleClass::stray || value == SampleClass::unsure;
    }
    return out;
}

ErrorModel endpoint_model(const Context& context) {
    const auto* bad = find_step(context, core::StepRole::bad_endpoint);
    const auto* good = find_step(context, core::StepRole::good_endpoint);
    return error_model(bad ? samples_of(context, *bad) : std::vector<core::Sample>{},
                       good ? samples_of(context, *good) : std::vector<core::Sample>{});
}

Expected<Cost> cost_of(const Context& context) {
    Cost cost;
    std::set<std::string> commits_tested;
    for (const auto& step : context.steps)
        commits_tested.insert(step.commit);
    // A series' commits are built as its base with patches, and a config line's as the
    // cell's commit with each step's .config: recorded so.
    if (!context.series_commits.empty() || !context.config_commits.empty())
        commits_tested.insert(context.record.commit);
    // From the build records, not the steps: a build finished just before a kill is a
    // cache hit for the resumed step, but it was built by this bisect all the same.
    for (const auto& build : RIG_TRY(context.db.kernel_builds()))
        if (commits_tested.count(build.commit) && build.started_at >= context.info.created_at) {
            ++cost.builds;
            cost.build_seconds += build.duration_seconds;
        }
    for (const auto& [cell, samples] : context.samples_by_cell)
        for (const core::Sample& sample : samples) {
            ++cost.boots;
            cost.guest_seconds += sample.total_seconds;
        }
    return cost;
}

std::optional<std::string> cap_reached(const StartOptions& options, const Cost& cost) {
    const double hours = (cost.build_seconds + cost.guest_seconds) / 3600;
    if (options.max_builds > 0 && cost.builds >= static_cast<size_t>(options.max_builds))
        return std::to_string(cost.builds) + " kernel builds of at most " +
               std::to_string(options.max_builds);
    if (options.max_boots > 0 && cost.boots >= static_cast<size_t>(options.max_boots))
        return std::to_string(cost.boots) + " guest boots of at most " +
               std::to_string(options.max_boots);
    if (options.max_hours > 0 && hours >= options.max_hours)
        return util::fixed(hours, 2) + " hours of builds and guests of at most " +
               util::fixed(options.max_hours, 2);
    return std::nullopt;
}

size_t round_size(const Context& context) {
    if (!context.options.multisection || context.scenario.backend == core::Backend::slurm)
        return 1;
    int jobs = context.options.jobs > 0 ? context.options.jobs : context.scenario.jobs;
    return static_cast<size_t>(std::max(jobs, 1));
}

namespace {

// ceil(log_(round+1) commits), in whole numbers: the rounds that cut `commits` to one.
int rounds_for(size_t commits, size_t round) {
    int rounds = 0;
    for (size_t covered = 1; covered < commits; covered *= round + 1)
        ++rounds;
    return rounds;
}

} // namespace

int build_bound(size_t commits, size_t round) {
    round = std::max<size_t>(round, 1);
    return static_cast<int>(round) * rounds_for(commits, round) + 2;
}

std::string build_bound_text(size_t commits, size_t round) {
    round = std::max<size_t>(round, 1);
    std::string n = std::to_string(commits);
    std::string formula = round == 1 ? "ceil(log2 " + n + ")"
                                     : std::to_string(round) + " x ceil(log" +
                                           std::to_string(round + 1) + " " + n + ")";
    return formula + " + 2 = " + std::to_string(build_bound(commits, round));
}

std::string build_label(const store::BisectStep& step) {
    if (!step.build_outcome)
        return "-";
    bool ok = *step.build_outcome == core::BuildOutcome::ok;
    std::string outcome(core::to_string(*step.build_outcome));
    if (step.build_cached)
        return ok ? "cached" : outcome + " (cached)";
    std::string seconds = util::fixed(step.build_seconds, 0) + " s";
    return ok ? seconds : outcome + ", " + seconds;
}

} // namespace rig::bisect
