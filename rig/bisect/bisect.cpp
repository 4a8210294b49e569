// SPDX-License-Identifier: MIT
// The bisect driver: endpoints, git's steps, verification, all from and into the store.
#include "bisect/bisect.hpp"

#include "bisect/git.hpp"
#include "core/matrix.hpp"
#include "core/stats.hpp"
#include "guest/initramfs.hpp"
#include "host/facts.hpp"
#include "kernel/build.hpp"
#include "report/table.hpp"
#include "rig_config.hpp"
#include "run/batch.hpp"
#include "run/sample.hpp"
#include "spec/spec.hpp"
#include "util/hash.hpp"
#include "util/lock.hpp"
#include "util/strings.hpp"
#include "vm/libvirt.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace rig::bisect {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_bad_endpoint = "bad-endpoint";
constexpr const char* k_good_endpoint = "good-endpoint";
constexpr const char* k_step = "bisect";
constexpr const char* k_verify_culprit = "verify-culprit";
constexpr const char* k_verify_parent = "verify-parent";
constexpr const char* k_verify_revert = "verify-revert";

std::string short_sha(const std::string& sha) {
    return sha.substr(0, 12);
}

std::string fixed(double value, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

} // namespace

std::string_view to_string(Status status) {
    switch (status) {
    case Status::running:
        return "running";
    case Status::culprit:
        return "culprit";
    case Status::unverified:
        return "unverified";
    case Status::inconclusive:
        return "inconclusive";
    case Status::not_reproducible:
        return "not-reproducible";
    case Status::stopped:
        return "stopped";
    case Status::interrupted:
        return "interrupted";
    }
    return "?";
}

Status parse_status(std::string_view text) {
    for (Status status : {Status::culprit, Status::unverified, Status::inconclusive,
                          Status::not_reproducible, Status::stopped, Status::interrupted})
        if (to_string(status) == text)
            return status;
    return Status::running;
}

std::string encode_settings(const StartOptions& options) {
    std::ostringstream out;
    out << "scenario=" << options.scenario.string() << "\n"
        << "cell=" << options.cell << "\n"
        << "samples=" << options.samples << "\n"
        << "confidence=" << options.confidence << "\n"
        << "max_samples=" << options.max_samples << "\n"
        << "infra_retries=" << options.infra_retries << "\n"
        << "verify_revert=" << (options.verify_revert ? 1 : 0) << "\n";
    return out.str();
}

Expected<StartOptions> decode_settings(const std::string& text) {
    StartOptions options;
    for (const std::string& line : util::split(text, '\n')) {
        auto equals = line.find('=');
        if (equals == std::string::npos)
            continue;
        std::string key = line.substr(0, equals), value = line.substr(equals + 1);
        try {
            if (key == "scenario")
                options.scenario = value;
            else if (key == "cell")
                options.cell = value;
            else if (key == "samples")
                options.samples = std::stoi(value);
            else if (key == "confidence")
                options.confidence = std::stod(value);
            else if (key == "max_samples")
                options.max_samples = std::stoi(value);
            else if (key == "infra_retries")
                options.infra_retries = std::stoi(value);
            else if (key == "verify_revert")
                options.verify_revert = value == "1";
        } catch (const std::exception&) {
            return fail(ErrorKind::infra, "stored bisect setting '" + line + "' is not valid");
        }
    }
    return options;
}

Expected<size_t> select_cell(const std::vector<core::Cell>& cells, const std::string& filter) {
    std::vector<size_t> matches;
    bool by_keys = filter.find('=') != std::string::npos;
    for (size_t i = 0; i < cells.size(); ++i) {
        const core::Cell& cell = cells[i];
        bool match = true;
        if (!by_keys) {
            match = !filter.empty() && util::starts_with(cell.id, filter);
        } else {
            for (const std::string& pair : util::split(filter, ',')) {
                auto equals = pair.find('=');
                if (equals == std::string::npos)
                    return fail(ErrorKind::usage,
                                "--cell " + filter + ": '" + pair + "' is not KEY=VALUE");
                std::string key(util::trim(pair.substr(0, equals)));
                std::string value(util::trim(pair.substr(equals + 1)));
                std::string have = key == "kernel"   ? cell.kernel_name
                                   : key == "config" ? cell.config
                                   : key == "cell"   ? cell.id
                                                     : cell.param(key);
                match &= have == value;
            }
        }
        if (match)
            matches.push_back(i);
    }
    if (matches.size() == 1)
        return matches.front();
    std::string list;
    for (const core::Cell& cell : cells) {
        list += "\n  " + cell.id + " " + cell.kernel_name + " " + cell.config;
        for (const auto& [key, value] : cell.params)
            list += " " + key + "=" + value;
    }
    return fail(ErrorKind::usage, "--cell " + filter + " matches " +
                                      std::to_string(matches.size()) +
                                      " cells; it must name exactly one of:" + list);
}

namespace {

// Everything a bisect's steps share, loaded once per `run_bisect`.
struct Context {
    store::Database& db;
    const Settings& settings;
    store::BisectInfo info;
    StartOptions options;
    Criterion criterion;
    core::Scenario scenario;
    core::Cell cell;
    fs::path scenario_dir;
    fs::path repo;
    std::optional<GitBisect> git;
    std::vector<store::BisectStep> steps;
    std::map<std::string, std::vector<core::Sample>> samples_by_cell;
    std::unique_ptr<vm::Hypervisor> libvirt; // backend libvirt: the scenario's daemon
};

Expected<Context> load(int64_t id, store::Database& db, const Settings& settings) {
    auto info = RIG_TRY(db.bisect(id));
    if (!info)
        return fail(ErrorKind::usage, "no bisect " + std::to_string(id) + " in the database");
    auto run = RIG_TRY(db.run(info->run_id));
    if (!run)
        return fail(ErrorKind::infra, "bisect " + std::to_string(id) + " has lost its run");
    // The stored text, not today's file: a resumed bisect tests the same cell.
    auto scenario = RIG_TRY(spec::parse_scenario(run->scenario_text, run->scenario_file));
    auto cells = RIG_TRY(core::expand(scenario));
    auto found = std::find_if(cells.begin(), cells.end(),
                              [&](const core::Cell& cell) { return cell.id == info->cell_id; });
    if (found == cells.end())
        return fail(ErrorKind::infra, "bisect " + std::to_string(id) + ": cell " + info->cell_id +
                                          " is not in its scenario");
    Context context{db,
                    settings,
                    *info,
                    RIG_TRY(decode_settings(info->state)),
                    RIG_TRY(parse_criterion(info->criterion)),
                    scenario,
                    *found,
                    fs::absolute(run->scenario_file).parent_path(),
                    {},
                    std::nullopt,
                    RIG_TRY(db.bisect_steps(id)),
                    {},
                    nullptr};
    const core::Kernel& kernel = scenario.kernels[found->kernel];
    context.repo = kernel::git_request(kernel, found->fragments, context.scenario_dir).repo;
    context.git.emplace(RIG_TRY(GitBisect::open(
        settings.results_dir / "bisects" / std::to_string(id) / "git", context.repo)));
    for (core::Sample& sample : RIG_TRY(db.samples(info->run_id)))
        context.samples_by_cell[sample.cell_id].push_back(std::move(sample));
    return context;
}

// The scenario with the bisected kernel at `sha` (and `patches` added), and its cell.
struct CommitCell {
    core::Scenario scenario;
    core::Cell cell;
};

CommitCell commit_cell(const Context& context, const std::string& sha,
                       const std::vector<std::string>& patches, const std::string& label) {
    CommitCell out{context.scenario, {}};
    core::Kernel& kernel = out.scenario.kernels[context.cell.kernel];
    kernel.name = context.cell.kernel_name + "@" + short_sha(sha) + label;
    kernel.ref = sha;
    kernel.patches.insert(kernel.patches.end(), patches.begin(), patches.end());
    out.cell = core::make_cell(out.scenario, context.cell.kernel, context.cell.params);
    return out;
}

const store::BisectStep* find_step(const Context& context, const std::string& role,
                                   const std::string& commit = "") {
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

// How a step decides when it has enough samples.
struct Policy {
    enum class Kind { fixed, functional, duration, metric } kind = Kind::fixed;
    int samples = 0; // fixed: exactly this many; functional: clean ones needed; duration,
                     // metric: the first verdict's
    int budget = 0;  // duration, metric: at most this many
    std::set<std::string> targets; // errors criterion
    const Calibration* calibration = nullptr;
    Verdict calibrates = Verdict::unsure; // fixed: the endpoint being calibrated
    const MetricPlan* metric_plan = nullptr;
};

// Duration and metric criteria compare a number per sample against the endpoints'.
bool compares_values(const Criterion& criterion) {
    return criterion.kind == CriterionKind::duration || criterion.kind == CriterionKind::metric;
}

struct Measured {
    store::BisectStep step;
    std::vector<core::Sample> samples;
    bool interrupted = false;
    std::optional<std::string> stopped; // infra errors in a row, or a full disk: why
};

std::string build_label(const store::BisectStep& step) {
    if (step.build_outcome.empty())
        return "-";
    if (step.build_cached)
        return step.build_outcome == "ok" ? "cached" : step.build_outcome + " (cached)";
    std::string seconds = fixed(step.build_seconds, 0) + " s";
    return step.build_outcome == "ok" ? seconds : step.build_outcome + ", " + seconds;
}

std::string timing_summary(const std::vector<double>& values) {
    if (values.empty())
        return "none usable";
    core::Summary summary = core::summarize(values);
    return "median " + fixed(summary.median, 2) + " s, IQR " + fixed(summary.q1, 2) + "-" +
           fixed(summary.q3, 2) + " s";
}

// The verdict a step's samples give under its policy, or nullopt while more are needed.
Decision decide(const Context& context, const Policy& policy,
                const std::vector<core::Sample>& samples) {
    std::vector<SampleClass> classes;
    std::vector<double> values; // duration, metric
    int unusable = 0;
    for (const auto& sample : samples) {
        SampleClass value = classify_sample(context.criterion, sample, policy.targets);
        if (value == SampleClass::infra || value == SampleClass::aborted)
            continue;
        classes.push_back(value);
        if (value == SampleClass::clean && compares_values(context.criterion))
            values.push_back(*measured_value(context.criterion, sample));
        unusable += value == SampleClass::unusable;
    }
    switch (policy.kind) {
    case Policy::Kind::fixed: {
        if (static_cast<int>(classes.size()) < policy.samples)
            return {std::nullopt, ""};
        int reproduced =
            static_cast<int>(std::count(classes.begin(), classes.end(), SampleClass::reproduces));
        std::string counts =
            std::to_string(reproduced) + " of " + std::to_string(classes.size()) + " reproduce";
        if (compares_values(context.criterion)) {
            bool duration = context.criterion.kind == CriterionKind::duration;
            return {unusable * 2 > static_cast<int>(classes.size()) ? Verdict::skip
                                                                    : policy.calibrates,
                    duration ? std::to_string(values.size()) + " timings, " + timing_summary(values)
                             : "values " + to_text(spread_of(values))};
        }
        if (reproduced > 0)
            return {Verdict::bad, counts};
        if (unusable > 0)
            return {Verdict::skip, counts + ", " + std::to_string(unusable) + " unusable"};
        return {Verdict::good, counts};
    }
    case Policy::Kind::functional:
        return decide_functional(classes, policy.samples);
    case Policy::Kind::duration:
        return decide_duration(*policy.calibration, values, unusable, policy.samples,
                               policy.budget);
    case Policy::Kind::metric:
        return decide_metric(*policy.metric_plan, values, unusable, policy.samples, policy.budget);
    }
    return {std::nullopt, ""};
}

std::string evidence_of(const Context& context, const Policy& policy,
                        const std::vector<core::Sample>& samples, const std::string& reason) {
    std::string out = reason;
    // The most telling sample: one that reproduces, else one that failed, else the last.
    const core::Sample* chosen = nullptr;
    for (const auto& sample : samples) {
        SampleClass value = classify_sample(context.criterion, sample, policy.targets);
        if (value == SampleClass::reproduces) {
            chosen = &sample;
            break;
        }
        if (value == SampleClass::unusable && !chosen)
            chosen = &sample;
    }
    // A duration or metric step's reason already has its values; a failed sample still
    // needs telling.
    if (chosen &&
        (!compares_values(context.criterion) ||
         classify_sample(context.criterion, *chosen, policy.targets) == SampleClass::unusable))
        out += "; " + sample_evidence(context.criterion, *chosen, policy.targets);
    return out;
}

// backend slurm keeps samples where every node sees them: the scenario's shared folder.
fs::path samples_dir(const Context& context) {
    const std::string& shared = context.scenario.slurm.shared;
    fs::path root = context.scenario.backend == core::Backend::slurm && !shared.empty()
                        ? fs::path(shared)
                        : context.settings.results_dir;
    return root / "bisects" / std::to_string(context.info.id);
}

// One sample on the scenario's backend: a guest of this machine (QEMU or libvirt, as the
// context says) or a Slurm job; both run run::run_sample, so the records agree.
Expected<run::SampleRun> take_sample(const Context& context, const run::SampleContext& sample,
                                     const std::atomic<bool>& interrupted, std::ostream& out) {
    if (context.scenario.backend != core::Backend::slurm)
        return run::run_sample(sample);
    run::BatchSettings batch;
    batch.jobs_dir = samples_dir(context) / "jobs";
    batch.program = context.settings.program;
    batch.cwd = fs::current_path();
    batch.job_name = run::batch_job_name(context.settings.db, context.info.created_at,
                                         "bisect" + std::to_string(context.info.id));
    batch.options = run::job_options(context.scenario);
    const std::string& shared = context.scenario.slurm.shared;
    // A node whose folder ran out of space sends an infra-error sample that says so; the
    // infra retries then stop the bisect.
    return run::SampleRun{
        RIG_TRY(run::run_batch_one(
            sample, batch, shared.empty() ? context.settings.results_dir : fs::path(shared),
            interrupted,
            [&](const std::string& text) {
                out << "bisect " << context.info.id << ": " << text << "\n" << std::flush;
            })),
        std::nullopt};
}

// Builds the commit (a cache hit when a killed bisect already built it), then samples it
// until the policy decides, reusing the samples of this step stored before a kill.
Expected<Measured> measure(Context& context, const std::string& role, const std::string& sha,
                           const Policy& policy, vm::Hypervisor& hypervisor,
                           const std::atomic<bool>& interrupted, std::ostream& out,
                           const std::vector<std::string>& patches = {},
                           const std::string& label = "") {
    Measured measured;
    store::BisectStep& step = measured.step;
    step.bisect_id = context.info.id;
    step.role = role;
    step.commit = sha;
    CommitCell target = commit_cell(context, sha, patches, label);
    step.cell_id = target.cell.id;
    RIG_TRY(context.db.add_cells(context.info.run_id, {target.cell}));
    std::string prefix = "bisect " + std::to_string(context.info.id) + ": " + role + " " +
                         short_sha(sha) + label + ": ";

    const core::Kernel& kernel = target.scenario.kernels[context.cell.kernel];
    kernel::BuildSettings build;
    build.cache = context.settings.cache_dir;
    build.interrupted = &interrupted;
    std::string last_phase;
    build.progress = [&](const kernel::BuildProgress& status) {
        if (status.phase == last_phase)
            return;
        last_phase = status.phase;
        out << prefix << status.phase << "\n" << std::flush;
    };
    auto built = kernel::build_git(
        kernel::git_request(kernel, context.cell.fragments, context.scenario_dir), build);
    if (!built && built.error().kind == ErrorKind::interrupted) {
        measured.interrupted = true;
        return measured;
    }
    auto result = RIG_TRY(std::move(built));
    RIG_TRY(kernel::record_build(context.db, result, kernel.name));
    step.build_outcome = std::string(kernel::to_string(result.outcome));
    step.build_seconds = result.seconds;
    step.build_cached = result.cache_hit;
    out << prefix << "build " << build_label(step) << "\n" << std::flush;
    if (result.outcome != kernel::BuildOutcome::ok) {
        step.verdict = std::string(to_string(Verdict::skip));
        std::string first = result.error_lines.substr(0, result.error_lines.find('\n'));
        // Compiler lines name files in rig's clone; the path inside the tree is what counts.
        if (auto src = first.find("/src/"); src != std::string::npos && first.front() == '/')
            first.erase(0, src + 5);
        step.evidence = step.build_outcome + ": " + first;
        step.id = RIG_TRY(context.db.add_bisect_step(step));
        context.steps.push_back(step);
        out << prefix << "skip (" << step.evidence << ")\n" << std::flush;
        return measured;
    }
    auto initrd = RIG_TRY(guest::base_initramfs(*result.artifact, context.settings.cache_dir));

    // Samples of this cell that no stored step claims were taken by this step before a kill.
    std::set<int64_t> claimed;
    for (const auto& other : context.steps)
        if (other.cell_id == step.cell_id)
            claimed.insert(other.samples.begin(), other.samples.end());
    auto& cell_samples = context.samples_by_cell[step.cell_id];
    int next_repetition = 0;
    for (const auto& sample : cell_samples) {
        next_repetition = std::max(next_repetition, sample.repetition + 1);
        if (!claimed.count(sample.id)) {
            measured.samples.push_back(sample);
            step.samples.push_back(sample.id);
        }
    }
    if (!measured.samples.empty())
        out << prefix << measured.samples.size() << " sample(s) kept from before the resume\n";

    std::string accel = host::choose_accel(context.scenario.guest.accel, host::probe().kvm);
    int infra_in_a_row = 0;
    Decision decision = decide(context, policy, measured.samples);
    while (!decision.verdict) {
        if (interrupted) {
            measured.interrupted = true;
            return measured;
        }
        int repetition = next_repetition++;
        run::SampleContext sample_context{target.scenario,
                                          target.cell,
                                          repetition,
                                          *result.artifact,
                                          initrd,
                                          samples_dir(context) / target.cell.id /
                                              std::to_string(repetition),
                                          accel,
                                          context.libvirt ? *context.libvirt : hypervisor,
                                          interrupted,
                                          [](const std::string&) {},
                                          {}};
        run::SampleRun ran = RIG_TRY(take_sample(context, sample_context, interrupted, out));
        core::Sample& sample = ran.sample;
        if (sample.outcome == core::Outcome::aborted || interrupted) {
            measured.interrupted = true;
            return measured;
        }
        sample.id = RIG_TRY(context.db.add_sample(context.info.run_id, sample));
        cell_samples.push_back(sample);
        measured.samples.push_back(sample);
        step.samples.push_back(sample.id);
        // Retrying on a full disk would only fail again.
        if (ran.out_of_space) {
            measured.stopped = *ran.out_of_space + ": free space there";
            return measured;
        }
        SampleClass value = classify_sample(context.criterion, sample, policy.targets);
        out << prefix << "sample " << repetition + 1 << ": " << to_string(value) << " ("
            << sample_evidence(context.criterion, sample, policy.targets) << ", "
            << fixed(sample.total_seconds, 0) << " s)\n"
            << std::flush;
        if (value == SampleClass::infra) {
            if (++infra_in_a_row > context.options.infra_retries) {
                measured.stopped = std::to_string(infra_in_a_row) + " infra errors in a row at " +
                                   short_sha(sha) + ": " +
                                   sample_evidence(context.criterion, sample, policy.targets);
                return measured;
            }
            continue;
        }
        infra_in_a_row = 0;
        decision = decide(context, policy, measured.samples);
    }
    step.verdict = std::string(to_string(*decision.verdict));
    step.evidence = evidence_of(context, policy, measured.samples, decision.reason);
    step.id = RIG_TRY(context.db.add_bisect_step(step));
    context.steps.push_back(step);
    out << prefix << step.verdict << " (" << step.evidence << ")\n" << std::flush;
    return measured;
}

// A measured step, or the finished step stored before a resume.
Expected<Measured> measure_once(Context& context, const std::string& role, const std::string& sha,
                                const Policy& policy, vm::Hypervisor& hypervisor,
                                const std::atomic<bool>& interrupted, std::ostream& out,
                                const std::vector<std::string>& patches = {},
                                const std::string& label = "") {
    if (const auto* stored = find_step(context, role, sha))
        return Measured{*stored, samples_of(context, *stored), false, std::nullopt};
    return measure(context, role, sha, policy, hypervisor, interrupted, out, patches, label);
}

Expected<Status> finish(Context& context, Status status, const std::string& culprit,
                        const std::string& message, std::ostream& out) {
    RIG_TRY(context.db.finish_bisect(context.info.id, std::string(to_string(status)), culprit,
                                     message));
    out << "bisect " << context.info.id << ": " << to_string(status);
    if (!message.empty())
        out << ": " << message;
    out << "\n";
    return status;
}

// A step that did not end with a verdict: interrupted, or stopped by infra errors.
std::optional<Expected<Status>> unfinished(Context& context, const Measured& measured,
                                           std::ostream& out) {
    if (measured.interrupted)
        return finish(context, Status::interrupted, "",
                      "resume with `rig bisect resume " + std::to_string(context.info.id) + "`",
                      out);
    if (measured.stopped)
        return finish(context, Status::stopped, "",
                      *measured.stopped + "; fix the machinery, then `rig bisect resume " +
                          std::to_string(context.info.id) + "`",
                      out);
    return std::nullopt;
}

// The values of a duration or metric step's usable samples.
std::vector<double> values_of(const Context& context, const std::vector<core::Sample>& samples) {
    std::vector<double> out;
    for (const auto& sample : samples)
        if (classify_sample(context.criterion, sample, {}) == SampleClass::clean)
            out.push_back(*measured_value(context.criterion, sample));
    return out;
}

// What a metric criterion's verdicts rest on: the endpoints' spread, the rule it chose and
// the samples each step took. The plan is made again from the stored endpoint samples,
// as run_bisect made it.
std::string metric_confidence(const Context& context) {
    const auto* bad_step = find_step(context, k_bad_endpoint);
    const auto* good_step = find_step(context, k_good_endpoint);
    if (!bad_step || !good_step)
        return "";
    MetricPlan plan =
        plan_metric(context.criterion, {values_of(context, samples_of(context, *good_step)),
                                        values_of(context, samples_of(context, *bad_step))});
    std::string out = describe_plan(context.criterion, plan) + "; " +
                      std::to_string(bad_step->samples.size()) + " samples at BAD, " +
                      std::to_string(good_step->samples.size()) + " at GOOD";
    std::vector<size_t> per_commit;
    for (const auto& step : context.steps)
        if (step.role == k_step && !step.samples.empty())
            per_commit.push_back(step.samples.size());
    if (!per_commit.empty()) {
        auto [least, most] = std::minmax_element(per_commit.begin(), per_commit.end());
        out += ", " + std::to_string(*least) +
               (*least == *most ? "" : "-" + std::to_string(*most)) + " per commit (" +
               std::to_string(per_commit.size()) + " commits)";
    }
    if (const auto* culprit = find_step(context, k_verify_culprit))
        out +=
            ", " + std::to_string(culprit->samples.size()) + " each for the culprit and its parent";
    return out;
}

} // namespace

Expected<int64_t> create_bisect(const StartOptions& options, store::Database& db,
                                const Settings& settings) {
    if (options.samples < 1 || options.samples > 100)
        return fail(ErrorKind::usage, "--samples must be between 1 and 100");
    if (!(options.confidence > 0 && options.confidence < 1))
        return fail(ErrorKind::usage, "--confidence must be between 0 and 1, for example 0.95");
    if (options.max_samples < 2)
        return fail(ErrorKind::usage, "--max-samples must be at least 2");
    Criterion criterion = RIG_TRY(parse_criterion(options.criterion));
    if (compares_values(criterion) && options.samples < 2)
        return fail(ErrorKind::usage, "criterion " + criterion.text() +
                                          " needs --samples 2 or more: the endpoints' spread "
                                          "is measured");
    auto scenario = RIG_TRY(spec::load_scenario(options.scenario));
    auto cells = RIG_TRY(core::expand(scenario));
    const core::Cell& cell = cells[RIG_TRY(select_cell(cells, options.cell))];
    const core::Kernel& kernel = scenario.kernels[cell.kernel];
    if (kernel.source != core::KernelSource::git)
        return fail(ErrorKind::usage, "cell " + cell.id + " runs kernel " + kernel.name +
                                          ", which is not a git kernel: only git kernels "
                                          "can be bisected");
    fs::path scenario_dir = fs::absolute(options.scenario).parent_path();
    fs::path repo = kernel::git_request(kernel, cell.fragments, scenario_dir).repo;
    if (!fs::exists(repo))
        return fail(ErrorKind::usage,
                    "kernel " + kernel.name + ": no repository at " + repo.string());

    store::BisectInfo info;
    info.scenario_hash = util::sha256_hex(scenario.text);
    info.cell_id = cell.id;
    info.criterion = criterion.text();
    store::RunInfo run;
    run.scenario_name = scenario.name + " (bisect)";
    // Absolute: a resume from another folder finds the scenario's relative git: paths.
    run.scenario_file = fs::absolute(options.scenario).string();
    run.scenario_text = scenario.text;
    run.scenario_hash = info.scenario_hash;
    run.host_facts = host::probe().to_json();
    run.rig_version = RIG_VERSION;
    // The bisect resumes, not its run: `rig run --resume` must never pick this one up.
    run.status = "finished";
    // Resolved in a scratch repository of rig's first: the bisect's own comes with its id.
    auto probe = RIG_TRY(GitBisect::open(settings.results_dir / "bisects" / "resolve", repo));
    info.good = RIG_TRY(probe.resolve(options.good));
    info.bad = RIG_TRY(probe.resolve(options.bad));
    if (info.good == info.bad)
        return fail(ErrorKind::usage, "--good and --bad are the same commit " + info.good);
    if (RIG_TRY(probe.count(info.good, info.bad)) == 0)
        return fail(ErrorKind::usage, "--bad " + options.bad + " does not come after --good " +
                                          options.good + ": git rev-list " + short_sha(info.good) +
                                          ".." + short_sha(info.bad) + " is empty");
    info.run_id = RIG_TRY(db.begin_run(run));
    StartOptions stored = options;
    stored.scenario = fs::absolute(options.scenario);
    info.state = encode_settings(stored);
    return db.begin_bisect(info);
}

Expected<Status> run_bisect(int64_t id, store::Database& db, vm::Hypervisor& hypervisor,
                            const Settings& settings, const std::atomic<bool>& interrupted,
                            std::ostream& out) {
    // Two rigs on one bisect would both mark commits in its git state and store steps
    // twice: the second one refuses before it reads anything.
    const fs::path dir = settings.results_dir / "bisects" / std::to_string(id);
    std::error_code ec;
    fs::create_directories(dir, ec);
    auto lock = RIG_TRY(util::FileLock::try_acquire(dir / "lock"));
    if (!lock)
        return fail(ErrorKind::usage, "bisect " + std::to_string(id) +
                                          " is already running in another rig; wait for it, or "
                                          "stop it and `rig bisect resume " +
                                          std::to_string(id) + "`");
    Context context = RIG_TRY(load(id, db, settings));
    if (context.scenario.backend == core::Backend::libvirt)
        context.libvirt = vm::make_libvirt_hypervisor(context.scenario.uri);
    Status current = parse_status(context.info.status);
    if (current != Status::running && current != Status::stopped &&
        current != Status::interrupted) {
        out << "bisect " << id << " has ended: " << to_string(current) << "\n";
        return current;
    }
    RIG_TRY(db.finish_bisect(id, "running", "", ""));
    const std::string& good = context.info.good;
    const std::string& bad = context.info.bad;
    size_t commits = RIG_TRY(context.git->count(good, bad));
    out << "bisect " << id << ": cell " << context.cell.id << " (" << context.cell.kernel_name
        << "), " << context.criterion.text() << ", " << commits << " commits in " << short_sha(good)
        << ".." << short_sha(bad) << ", at most "
        << static_cast<int>(std::ceil(std::log2(std::max<size_t>(commits, 1)))) + 2
        << " builds plus skips" << (context.steps.empty() ? "" : ", resuming") << "\n"
        << std::flush;

    // 1. The endpoints, bad first: its failures define what "reproduces" means.
    const int n = context.options.samples;
    Policy calibrate{Policy::Kind::fixed, n, 0, {}, nullptr, Verdict::bad, nullptr};
    auto bad_end = RIG_TRY(
        measure_once(context, k_bad_endpoint, bad, calibrate, hypervisor, interrupted, out));
    if (auto stop = unfinished(context, bad_end, out))
        return *stop;
    if (bad_end.step.build_outcome != "ok")
        return finish(context, Status::not_reproducible, "",
                      "not reproducible at BAD: " + short_sha(bad) + " does not build (" +
                          bad_end.step.evidence + ")",
                      out);
    Policy policy;
    Calibration calibration;
    MetricPlan metric_plan;
    SamplePlan plan;
    if (compares_values(context.criterion)) {
        calibration.bad = values_of(context, bad_end.samples);
        Policy calibrate_good = calibrate;
        calibrate_good.calibrates = Verdict::good;
        auto good_end = RIG_TRY(measure_once(context, k_good_endpoint, good, calibrate_good,
                                             hypervisor, interrupted, out));
        if (auto stop = unfinished(context, good_end, out))
            return *stop;
        if (good_end.step.build_outcome != "ok")
            return finish(context, Status::not_reproducible, "",
                          "GOOD " + short_sha(good) + " does not build (" + good_end.step.evidence +
                              ")",
                          out);
        calibration.good = values_of(context, good_end.samples);
        if (context.criterion.kind == CriterionKind::duration) {
            if (auto problem = check_duration_endpoints(calibration, context.criterion.threshold))
                return finish(context, Status::not_reproducible, "", *problem, out);
            policy.kind = Policy::Kind::duration;
            policy.samples = n;
            policy.calibration = &calibration;
        } else {
            // Recomputed from the stored endpoint samples on every resume: the same rule.
            metric_plan = plan_metric(context.criterion, calibration);
            if (metric_plan.problem)
                return finish(context, Status::not_reproducible, "", *metric_plan.problem, out);
            out << "bisect " << id << ": " << describe_plan(context.criterion, metric_plan) << "\n";
            policy.kind = Policy::Kind::metric;
            policy.samples = metric_plan.rule == MetricRule::midpoint ? 1 : n;
            policy.metric_plan = &metric_plan;
        }
        policy.budget = std::max(context.options.max_samples, n);
    } else {
        policy.targets = regression_signatures(bad_end.samples);
        int reproduced = 0, usable = 0;
        for (const auto& sample : bad_end.samples) {
            SampleClass value = classify_sample(context.criterion, sample, policy.targets);
            reproduced += value == SampleClass::reproduces;
            usable += value == SampleClass::reproduces || value == SampleClass::clean;
        }
        if (reproduced == 0)
            return finish(context, Status::not_reproducible, "",
                          "not reproducible at BAD: none of " +
                              std::to_string(bad_end.samples.size()) + " samples at " +
                              short_sha(bad) + " shows " + context.criterion.text() + " (" +
                              bad_end.step.evidence + ")",
                          out);
        plan = plan_samples(reproduced, usable, context.options.confidence,
                            context.options.max_samples);
        out << "bisect " << id << ": reproduces in " << reproduced << " of " << usable
            << " samples at BAD; " << plan.samples << " clean samples make a commit good "
            << "(confidence " << fixed(plan.confidence * 100, 1) << "%)\n";
        policy.kind = Policy::Kind::functional;
        policy.samples = plan.samples;
        auto good_end = RIG_TRY(
            measure_once(context, k_good_endpoint, good, policy, hypervisor, interrupted, out));
        if (auto stop = unfinished(context, good_end, out))
            return *stop;
        if (good_end.step.verdict == "bad")
            return finish(context, Status::not_reproducible, "",
                          "already bad at GOOD: " + short_sha(good) + " shows it too (" +
                              good_end.step.evidence + ")",
                          out);
        if (good_end.step.verdict != "good")
            return finish(
                context, Status::not_reproducible, "",
                "GOOD " + short_sha(good) + " cannot be tested: " + good_end.step.evidence, out);
    }

    // 2. git's bisect, replayed from the stored steps, then carried on.
    GitState state = RIG_TRY(context.git->start(bad, good));
    for (const auto& step : context.steps)
        if (step.role == k_step && !state.done)
            state = RIG_TRY(context.git->mark(*parse_verdict(step.verdict), step.commit));
    while (!state.done) {
        auto measured =
            RIG_TRY(measure(context, k_step, state.next, policy, hypervisor, interrupted, out));
        if (auto stop = unfinished(context, measured, out))
            return *stop;
        state = RIG_TRY(context.git->mark(*parse_verdict(measured.step.verdict), state.next));
    }
    if (state.culprit.empty()) {
        std::vector<std::string> shorts;
        for (const auto& candidate : state.candidates)
            shorts.push_back(short_sha(candidate));
        return finish(context, Status::inconclusive, "",
                      "the first bad commit is one of " + util::join(shorts, " ") +
                          " (skipped or unsure commits); rig names none of them",
                      out);
    }
    const std::string culprit = state.culprit;
    out << "bisect " << id << ": git names " << short_sha(culprit) << "; verifying\n";

    // 3. Verification: the culprit and its parent again, n samples each at least.
    Policy fixed_policy = calibrate;
    fixed_policy.targets = policy.targets;
    Policy parent_policy = policy;
    if (policy.kind == Policy::Kind::functional)
        parent_policy.samples = std::max(n, policy.samples);
    else
        parent_policy.budget = parent_policy.samples = std::max(n, 2);
    Policy culprit_policy = policy.kind == Policy::Kind::functional ? fixed_policy : parent_policy;
    auto verified = RIG_TRY(measure_once(context, k_verify_culprit, culprit, culprit_policy,
                                         hypervisor, interrupted, out));
    if (auto stop = unfinished(context, verified, out))
        return *stop;
    std::string parent = RIG_TRY(context.git->parent(culprit));
    auto parent_check = RIG_TRY(measure_once(context, k_verify_parent, parent, parent_policy,
                                             hypervisor, interrupted, out));
    if (auto stop = unfinished(context, parent_check, out))
        return *stop;
    bool confirmed = verified.step.verdict == "bad" && parent_check.step.verdict == "good";
    std::string why = "culprit " + verified.step.verdict + " (" + verified.step.evidence +
                      "), parent " + parent_check.step.verdict + " (" + parent_check.step.evidence +
                      ")";
    if (context.options.verify_revert && confirmed) {
        fs::path patch = settings.results_dir / "bisects" / std::to_string(id) / "revert.patch";
        if (auto written = context.git->write_revert_patch(culprit, bad, patch); !written) {
            confirmed = false;
            why += "; the revert on BAD does not apply: " + written.error().message;
        } else {
            auto reverted =
                RIG_TRY(measure_once(context, k_verify_revert, bad, parent_policy, hypervisor,
                                     interrupted, out, {patch.string()}, "+revert"));
            if (auto stop = unfinished(context, reverted, out))
                return *stop;
            confirmed = reverted.step.verdict == "good";
            why += ", BAD with the culprit reverted " + reverted.step.verdict + " (" +
                   reverted.step.evidence + ")";
        }
    }
    return finish(context, confirmed ? Status::culprit : Status::unverified, culprit,
                  confirmed ? short_sha(culprit) + " is the first bad commit, verified"
                            : "git named " + short_sha(culprit) + " but it did not verify: " + why,
                  out);
}

Expected<std::string> bisect_log(int64_t id, store::Database& db, const Settings& settings) {
    Context context = RIG_TRY(load(id, db, settings));
    GitState state = RIG_TRY(context.git->start(context.info.bad, context.info.good));
    for (const auto& step : context.steps)
        if (step.role == k_step && !state.done)
            state = RIG_TRY(context.git->mark(*parse_verdict(step.verdict), step.commit));
    return context.git->log();
}

Expected<std::string> render_status(store::Database& db, int64_t id) {
    std::vector<store::BisectInfo> all = RIG_TRY(db.bisects());
    report::Table table({{"id", report::Align::right},
                         {"status"},
                         {"cell"},
                         {"criterion"},
                         {"good..bad"},
                         {"steps", report::Align::right},
                         {"culprit"},
                         {"updated"}});
    std::string messages;
    for (const auto& info : all) {
        if (id != 0 && info.id != id)
            continue;
        auto steps = RIG_TRY(db.bisect_steps(info.id));
        table.add_row({std::to_string(info.id), info.status, info.cell_id, info.criterion,
                       short_sha(info.good) + ".." + short_sha(info.bad),
                       std::to_string(steps.size()), short_sha(info.culprit), info.updated_at});
        if (id != 0 && !info.message.empty())
            messages += info.status + ": " + info.message + "\n";
    }
    if (id != 0 && table.rows() == 0)
        return fail(ErrorKind::usage, "no bisect " + std::to_string(id) + " in the database");
    if (table.rows() == 0)
        return std::string("no bisects in the database\n");
    return table.to_text() + (messages.empty() ? "" : "\n" + messages);
}

Expected<std::string> render_report(int64_t id, store::Database& db, const Settings& settings) {
    Context context = RIG_TRY(load(id, db, settings));
    const auto& info = context.info;
    std::ostringstream out;
    auto describe = [&](const std::string& sha) -> std::string {
        auto commit = context.git->describe(sha);
        return commit ? short_sha(sha) + " (\"" + commit->subject + "\")" : short_sha(sha);
    };
    std::string label = context.cell.kernel_name + " " + context.cell.config;
    for (const auto& [key, value] : context.cell.params)
        label += " " + key + "=" + value;
    out << "bisect " << id << ": " << info.status << "\n"
        << "scenario: " << context.scenario.name << " (" << context.options.scenario.string()
        << ")\n"
        << "cell:     " << context.cell.id << " " << label << "\n"
        << "criterion: " << info.criterion << "\n"
        << "good:     " << describe(info.good) << "\n"
        << "bad:      " << describe(info.bad) << "\n";
    if (!info.message.empty())
        out << "result:   " << info.message << "\n";

    report::Table table({{"#", report::Align::right},
                         {"role"},
                         {"commit"},
                         {"subject"},
                         {"build"},
                         {"samples", report::Align::right},
                         {"verdict"},
                         {"evidence"}});
    size_t builds = 0, boots = 0;
    double build_seconds = 0;
    std::set<std::string> commits_tested;
    for (const auto& step : context.steps)
        commits_tested.insert(step.commit);
    // From the build records, not the steps: a build finished just before a kill is a
    // cache hit for the resumed step, but it was built by this bisect all the same.
    for (const auto& build : RIG_TRY(db.kernel_builds()))
        if (commits_tested.count(build.commit) && build.started_at >= info.created_at) {
            ++builds;
            build_seconds += build.duration_seconds;
        }
    for (size_t i = 0; i < context.steps.size(); ++i) {
        const auto& step = context.steps[i];
        auto commit = context.git->describe(step.commit);
        std::string subject = commit ? commit->subject : "";
        if (subject.size() > 40)
            subject = subject.substr(0, 37) + "...";
        std::string evidence = step.evidence;
        if (evidence.size() > 90)
            evidence = evidence.substr(0, 87) + "...";
        table.add_row({std::to_string(i + 1), step.role,
                       short_sha(step.commit) + (step.role == k_verify_revert ? "+revert" : ""),
                       subject, build_label(step), std::to_string(step.samples.size()),
                       step.verdict, evidence});
    }
    for (const auto& [cell, samples] : context.samples_by_cell)
        boots += samples.size();
    out << "\n" << table.to_text() << "\n";
    size_t commits = RIG_TRY(context.git->count(info.good, info.bad));
    size_t skips = std::count_if(context.steps.begin(), context.steps.end(), [](const auto& s) {
        return s.role == k_step && (s.verdict == "skip" || s.verdict == "unsure");
    });
    out << "cost: " << builds << " builds (" << fixed(build_seconds / 60, 1) << " min), " << boots
        << " boots; " << commits << " commits in range, bound ceil(log2 " << commits
        << ") + 2 = " << static_cast<int>(std::ceil(std::log2(std::max<size_t>(commits, 1)))) + 2
        << " builds plus " << skips << " skipped\n";

    // The confidence behind the verdicts.
    std::string confidence;
    if (context.criterion.kind == CriterionKind::duration) {
        confidence =
            "each verdict is a Welch t-test (alpha 0.05) of the commit's timings "
            "against both endpoints (" +
            std::to_string(context.options.samples) +
            " samples each); commits that matched neither within " +
            std::to_string(std::max(context.options.max_samples, context.options.samples)) +
            " samples were skipped, not guessed";
    } else if (context.criterion.kind == CriterionKind::metric) {
        confidence = metric_confidence(context);
    } else if (const auto* bad_step = find_step(context, k_bad_endpoint)) {
        auto samples = samples_of(context, *bad_step);
        auto targets = regression_signatures(samples);
        int reproduced = 0, usable = 0;
        for (const auto& sample : samples) {
            SampleClass value = classify_sample(context.criterion, sample, targets);
            reproduced += value == SampleClass::reproduces;
            usable += value == SampleClass::reproduces || value == SampleClass::clean;
        }
        SamplePlan plan = plan_samples(reproduced, usable, context.options.confidence,
                                       context.options.max_samples);
        confidence = "reproduced in " + std::to_string(reproduced) + " of " +
                     std::to_string(usable) + " samples at BAD (rate taken as " +
                     fixed(plan.rate, 2) + "); a good verdict took " +
                     std::to_string(plan.samples) +
                     " clean samples, so a commit as bad as BAD passes as good with "
                     "probability at most " +
                     fixed((1 - plan.confidence) * 100, 1) + "% (confidence " +
                     fixed(plan.confidence * 100, 1) + "%)";
        if (!targets.empty()) {
            std::vector<std::string> list(targets.begin(), targets.end());
            confidence += "; regression signature(s): " + util::join(list, " | ");
        }
    }
    if (!confidence.empty())
        out << "confidence: " << confidence << "\n";

    if (!info.culprit.empty()) {
        auto commit = RIG_TRY(context.git->describe(info.culprit));
        const auto* culprit_step = find_step(context, k_verify_culprit);
        const auto* parent_step = find_step(context, k_verify_parent);
        const auto* revert_step = find_step(context, k_verify_revert);
        out << "\nfirst bad commit: " << commit.sha << "\n"
            << "  subject: " << commit.subject << "\n"
            << "  author:  " << commit.author << "\n"
            << "  date:    " << commit.date << "\n";
        out << "\n--- summary for a mail ---\n";
        out << "Subject: [REGRESSION] " << commit.subject << "\n\n";
        out << "rig bisected a regression in " << context.cell.kernel_name << " ("
            << context.cell.config << "; ";
        std::vector<std::string> params;
        for (const auto& [key, value] : context.cell.params)
            params.push_back(key + "=" + value);
        out << util::join(params, ", ") << ") under the criterion " << info.criterion << ",\n"
            << "between good " << describe(info.good) << " and bad " << describe(info.bad)
            << ".\n\n"
            << "The first bad commit is\n\n"
            << "  commit " << commit.sha << "\n"
            << "  Author: " << commit.author << "\n"
            << "  Date:   " << commit.date << "\n\n"
            << "      " << commit.subject << "\n\n";
        if (culprit_step && parent_step)
            out << "Verified: the commit tested " << culprit_step->verdict << " again ("
                << culprit_step->evidence << ");\nits parent " << short_sha(parent_step->commit)
                << " tested " << parent_step->verdict << " (" << parent_step->evidence << ").\n";
        if (revert_step)
            out << "Reverting it on " << short_sha(info.bad) << " tested " << revert_step->verdict
                << " (" << revert_step->evidence << ").\n";
        if (!confidence.empty())
            out << "Confidence: " << confidence << ".\n";
        out << "Cost: " << builds << " kernel builds, " << boots << " guest boots, "
            << context.steps.size() << " steps.\n"
            << "Replay: `rig bisect log " << id << "` prints the git bisect log.\n";
    }
    return out.str();
}

} // namespace rig::bisect
