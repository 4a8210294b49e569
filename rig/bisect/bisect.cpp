// SPDX-License-Identifier: MIT
// The bisect driver: endpoints, git's steps, verification, all from and into the store.
#include "bisect/bisect.hpp"

#include "bisect/context.hpp"
#include "bisect/multisect.hpp"
#include "bisect/step.hpp"
#include "core/matrix.hpp"
#include "kernel/build.hpp"
#include "rig_config.hpp"
#include "run/cells.hpp"
#include "spec/spec.hpp"
#include "util/clock.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/lock.hpp"
#include "util/strings.hpp"
#include "vm/libvirt.hpp"

#include <algorithm>
#include <sstream>

namespace rig::bisect {

namespace fs = std::filesystem;

namespace {

// Set when the bisect has ended, with how.
using Ending = std::optional<core::BisectStatus>;

Expected<core::BisectStatus> finish(Context& context, core::BisectStatus status,
                                    const std::string& culprit, const std::string& message,
                                    std::ostream& out) {
    RIG_TRY(context.db.finish_bisect(context.info.id, status, culprit, message));
    out << "bisect " << context.info.id << ": " << to_string(status);
    if (!message.empty())
        out << ": " << message;
    out << "\n";
    return status;
}

Expected<Ending> not_reproducible(Context& context, const std::string& message, std::ostream& out) {
    return Ending(RIG_TRY(finish(context, core::BisectStatus::not_reproducible, "", message, out)));
}

// A step that did not end with a verdict: interrupted, or stopped by infra errors.
Expected<Ending> unfinished(Context& context, const Measured& measured, std::ostream& out) {
    std::string resume = "`rig bisect resume " + std::to_string(context.info.id) + "`";
    if (measured.interrupted)
        return Ending(RIG_TRY(
            finish(context, core::BisectStatus::interrupted, "", "resume with " + resume, out)));
    if (measured.stopped)
        return Ending(
            RIG_TRY(finish(context, core::BisectStatus::stopped, "",
                           *measured.stopped + "; fix the machinery, then " + resume, out)));
    return Ending();
}

// What the endpoints decide for the steps between them. Not movable: the policies point
// into it.
struct Endpoints {
    Policy calibrate; // the endpoints' own: a fixed number of samples
    Policy policy;    // the bisect steps'
    Calibration calibration;
    MetricPlan metric_plan;
    ErrorModel errors;    // errors: BAD's failures against GOOD's
    SamplePlan verifying; // functional: how many samples the verification takes
    Endpoints() = default;
    Endpoints(const Endpoints&) = delete;
    Endpoints& operator=(const Endpoints&) = delete;
};

// GOOD measured, as the endpoints calibrate, with `samples` samples into `good_end`; how
// the bisect ends when that did not finish or GOOD does not build.
Expected<Ending> measure_good(Context& context, int samples, const Endpoints& ends,
                              const StepIo& io, Measured& good_end) {
    const std::string& good = context.info.good;
    Policy calibrate_good = ends.calibrate;
    calibrate_good.calibrates = core::Verdict::good;
    calibrate_good.samples = samples;
    good_end =
        RIG_TRY(measure_once(context, {core::StepRole::good_endpoint, good, calibrate_good}, io));
    if (auto stop = RIG_TRY(unfinished(context, good_end, io.out)))
        return stop;
    if (good_end.step.build_outcome != core::BuildOutcome::ok)
        return not_reproducible(
            context, "GOOD " + short_sha(good) + " does not build (" + good_end.step.evidence + ")",
            io.out);
    return Ending();
}

// Duration and metric criteria: GOOD measured like BAD, both values calibrate the steps.
Expected<Ending> calibrate_values(Context& context, const StepIo& io, Endpoints& ends,
                                  const Measured& bad_end) {
    const int n = context.options.samples;
    ends.calibration.bad = values_of(context, bad_end.samples);
    Measured good_end;
    if (auto stop = RIG_TRY(measure_good(context, ends.calibrate.samples, ends, io, good_end)))
        return stop;
    ends.calibration.good = values_of(context, good_end.samples);
    Policy& policy = ends.policy;
    if (context.criterion.kind == CriterionKind::duration) {
        if (auto problem = check_duration_endpoints(ends.calibration, context.criterion.threshold))
            return not_reproducible(context, *problem, io.out);
        policy.kind = Policy::Kind::duration;
        policy.samples = n;
        policy.calibration = &ends.calibration;
    } else {
        // Recomputed from the stored endpoint samples on every resume: the same rule.
        ends.metric_plan = plan_metric(context.criterion, ends.calibration);
        if (ends.metric_plan.problem)
            return not_reproducible(context, *ends.metric_plan.problem, io.out);
        io.out << "bisect " << context.info.id << ": "
               << describe_plan(context.criterion, ends.metric_plan) << "\n";
        policy.kind = Policy::Kind::metric;
        policy.samples = ends.metric_plan.rule == MetricRule::midpoint ? 1 : n;
        policy.metric_plan = &ends.metric_plan;
    }
    policy.budget = std::max(context.options.max_samples, n);
    return Ending();
}

// The endpoints' stored verdicts and evidence restated under the error model, so that the
// step table, the confidence line and the mail give one count.
Expected<void> restate_endpoints(Context& context, const ErrorModel& model,
                                 std::vector<Measured*> ends) {
    for (Measured* end : ends) {
        Reproduction seen = count_reproduction(context.criterion, end->samples, model);
        store::BisectStep& step = end->step;
        bool at_bad = step.role == core::StepRole::bad_endpoint;
        step.evidence =
            std::to_string(seen.reproduced) + " of " + std::to_string(seen.usable) + " reproduce";
        int strays = 0;
        for (const auto& sample : end->samples)
            strays += classify_sample(context.criterion, sample, model) == SampleClass::stray;
        if (strays > 0)
            step.evidence += ", " + std::to_string(strays) + " stray";
        std::string families = at_bad ? describe_regression(model) : describe_strays(model);
        if (!families.empty())
            step.evidence += "; " + families;
        if (at_bad)
            step.verdict = seen.reproduced > 0 ? core::Verdict::bad : core::Verdict::good;
        RIG_TRY(context.db.restate_bisect_step(step.id, step.verdict, step.evidence));
        for (auto& stored : context.steps)
            if (stored.id == step.id)
                stored = step;
    }
    return {};
}

// Functional criteria: how many clean samples make a commit good, from BAD's rate; under
// errors, what reproduces is BAD's failures held against GOOD's (error_model).
Expected<Ending> calibrate_functional(Context& context, const StepIo& io, Endpoints& ends,
                                      Measured& bad_end) {
    const std::string& good = context.info.good;
    const auto& options = context.options;
    const bool errors = context.criterion.kind == CriterionKind::errors;
    Reproduction seen = count_reproduction(context.criterion, bad_end.samples, {});
    if (seen.reproduced == 0)
        return not_reproducible(context,
                                "not reproducible at BAD: none of " +
                                    std::to_string(bad_end.samples.size()) + " samples at " +
                                    short_sha(context.info.bad) + " shows " +
                                    context.criterion.text() + " (" + bad_end.step.evidence + ")",
                                io.out);
    // GOOD takes twice the samples a good verdict would, all of them: its failures, if
    // any, are what BAD's are held against, and a flake it happens not to show could pass
    // for the regression. Planned from BAD alone, so a resume plans the same.
    SamplePlan plan =
        plan_samples(seen.reproduced, seen.usable, options.confidence, options.max_samples);
    Measured good_end;
    if (auto stop = RIG_TRY(
            measure_good(context, std::max(2 * plan.samples, options.samples), ends, io, good_end)))
        return stop;
    if (good_end.step.verdict == core::Verdict::skip)
        return not_reproducible(
            context, "GOOD " + short_sha(good) + " cannot be tested: " + good_end.step.evidence,
            io.out);
    Policy& policy = ends.policy;
    if (errors) {
        ends.errors = error_model(bad_end.samples, good_end.samples);
        policy.errors = &ends.errors;
        // Endpoints that leave nothing to bisect keep what they said: the message says why.
        if (ends.errors.problem)
            return not_reproducible(context, *ends.errors.problem, io.out);
        RIG_TRY(restate_endpoints(context, ends.errors, {&bad_end, &good_end}));
        seen = count_reproduction(context.criterion, bad_end.samples, ends.errors);
        plan = plan_samples(seen.reproduced, seen.usable, options.confidence, options.max_samples);
    } else if (good_end.step.verdict == core::Verdict::bad) {
        return not_reproducible(context,
                                "already bad at GOOD: " + short_sha(good) + " shows it too (" +
                                    good_end.step.evidence + ")",
                                io.out);
    }
    ends.verifying =
        plan_verification(seen.reproduced, seen.usable, options.confidence, options.max_samples);
    io.out << "bisect " << context.info.id << ": reproduces in " << seen.reproduced << " of "
           << seen.usable << " samples at BAD; " << plan.samples
           << " clean samples make a commit good (confidence "
           << util::fixed(plan.confidence * 100, 1) << "%)"
           << (errors ? "; " + describe_regression(ends.errors) : "") << "\n";
    policy.kind = Policy::Kind::functional;
    policy.samples = plan.samples;
    policy.budget = 2 * plan.samples;
    return Ending();
}

// Under the output criterion, GOOD's first sample before BAD's: what every commit's outputs
// are held against, BAD's included (step.cpp, references_of), so that an output that is
// wrong the same way in every sample still shows. The GOOD endpoint takes it over.
Expected<Ending> take_reference(Context& context, const StepIo& io) {
    const std::string& good = context.info.good;
    if (context.criterion.kind != CriterionKind::outcome ||
        context.criterion.pattern != core::to_string(core::Outcome::wrong_output) ||
        core::output_globs(context.scenario.workload).empty() ||
        find_step(context, core::StepRole::good_endpoint, good) ||
        !context.samples_by_cell[good_cell_id(context)].empty())
        return Ending();
    Policy one;
    one.kind = Policy::Kind::fixed;
    one.samples = 1;
    one.budget = std::max(context.options.max_samples, 1);
    one.calibrates = core::Verdict::good;
    io.out << "bisect " << context.info.id << ": GOOD " << short_sha(good)
           << " first: its outputs are the reference every commit's are held against\n";
    Measured reference =
        RIG_TRY(measure_unclaimed(context, {core::StepRole::good_endpoint, good, one}, io));
    if (auto stop = RIG_TRY(unfinished(context, reference, io.out)))
        return stop;
    return Ending();
}

// 1. The endpoints, bad first: its failures define what "reproduces" means.
Expected<Ending> calibrate(Context& context, const StepIo& io, Endpoints& ends) {
    const std::string& bad = context.info.bad;
    ends.calibrate.kind = Policy::Kind::fixed;
    ends.calibrate.samples = context.options.samples;
    ends.calibrate.budget = std::max(context.options.max_samples, context.options.samples);
    ends.calibrate.calibrates = core::Verdict::bad;
    if (auto stop = RIG_TRY(take_reference(context, io)))
        return stop;
    // Guests at once and a duration or metric to compare: GOOD's and BAD's samples are
    // taken together, interleaved over the same CPU sets, and found stored below.
    if (compares_values(context.criterion) && context.cpu_sets.size() > 1) {
        Policy calibrate_good = ends.calibrate;
        calibrate_good.calibrates = core::Verdict::good;
        auto both = RIG_TRY(
            measure_together(context,
                             {{core::StepRole::bad_endpoint, bad, ends.calibrate},
                              {core::StepRole::good_endpoint, context.info.good, calibrate_good}},
                             io));
        for (const Measured& end : both)
            if (auto stop = RIG_TRY(unfinished(context, end, io.out)))
                return stop;
    }
    auto bad_end =
        RIG_TRY(measure_once(context, {core::StepRole::bad_endpoint, bad, ends.calibrate}, io));
    if (auto stop = RIG_TRY(unfinished(context, bad_end, io.out)))
        return stop;
    if (bad_end.step.build_outcome != core::BuildOutcome::ok)
        return not_reproducible(context,
                                "not reproducible at BAD: " + short_sha(bad) + " does not build (" +
                                    bad_end.step.evidence + ")",
                                io.out);
    if (compares_values(context.criterion))
        return calibrate_values(context, io, ends, bad_end);
    return calibrate_functional(context, io, ends, bad_end);
}

// The cost cap, checked before each commit measured past the endpoints: once reached, the
// bisect ends as capped, saying how far it got (`what`).
Expected<Ending> over_cap(Context& context, const std::string& culprit, const std::string& what,
                          std::ostream& out) {
    auto reached = cap_reached(context.options, RIG_TRY(cost_of(context)));
    if (!reached)
        return Ending();
    return Ending(RIG_TRY(finish(context, core::BisectStatus::capped, culprit,
                                 "cost cap reached (" + *reached + ") " + what, out)));
}

// git's line on what is left ("Bisecting: 3 revisions left to test after this ..."), or "".
std::string left_to_test(const GitState& state) {
    for (std::string_view line : util::split(state.output, '\n'))
        if (util::starts_with(line, "Bisecting:"))
            return std::string(util::trim(line.substr(10)));
    return "";
}

// The commits to test next: git's one, or with --multisection and guest slots, one per
// slot at the quantiles of what is left. git alone when it wants a merge base tested.
Expected<std::vector<std::string>> round_of(const Context& context, const GitState& state) {
    const size_t slots = round_size(context);
    if (slots < 2 || state.output.find("merge base must be tested") != std::string::npos)
        return std::vector<std::string>{state.next};
    auto round = split_points(RIG_TRY(context.history->remaining()), slots);
    if (round.size() < 2)
        return std::vector<std::string>{state.next};
    return round;
}

// Whether builds ahead pay: the last step's guests took at least as long as two builds of
// the last commit built (both verdicts' next commits then finish before they are needed).
// A build stopped part way costs more than it saves: the next step rebuilds what the
// guessed commit changed. Measured on two cores (tests/bench/bisect-multisection), builds
// of 6 s: guests of 3 s with builds ahead regardless, 1.13x the wall; guests of 34 s, 0.93x.
bool builds_ahead_pay(const Context& context) {
    std::optional<double> build, guests;
    for (auto step = context.steps.rbegin(); step != context.steps.rend(); ++step) {
        if (!build && !step->build_cached && step->build_seconds > 0)
            build = step->build_seconds;
        if (!guests && !step->samples.empty()) {
            double seconds = 0;
            for (const core::Sample& sample : samples_of(context, *step))
                seconds += sample.total_seconds;
            guests = seconds / static_cast<double>(step->samples.size());
        }
    }
    return build && guests && *guests >= 2 * *build;
}

// What to build while `sha`'s guests run: the commits it may test next on either verdict.
// Only under a metric criterion, whose exact counts a build beside the guests cannot move
// (a duration would be slowed, a functional verdict's timeouts come nearer), only on cores
// no guest takes, and only where the guests outlast the builds (unless --build-ahead).
Expected<std::vector<std::string>> ahead_of(const Context& context, const std::string& sha) {
    if (!context.options.build_ahead || context.criterion.kind != CriterionKind::metric ||
        context.spare_cpus < 1 ||
        !(context.options.build_ahead_always || builds_ahead_pay(context)))
        return std::vector<std::string>{};
    return next_after(RIG_TRY(context.history->remaining()), sha);
}

std::string short_shas(const std::vector<std::string>& shas) {
    std::vector<std::string> shorts;
    for (const auto& sha : shas)
        shorts.push_back(short_sha(sha));
    return util::join(shorts, " ");
}

// 2. git's bisect, replayed from the stored steps, then carried on until git is done.
Expected<Ending> bisect_steps(Context& context, const StepIo& io, const Policy& policy,
                              GitState& state) {
    state = RIG_TRY(replay(context));
    while (!state.done) {
        std::string left = left_to_test(state);
        if (auto stop = RIG_TRY(
                over_cap(context, "",
                         "before " + short_sha(state.next) + " was tested" +
                             (left.empty() ? "" : " (" + left + ")") + "; `rig bisect log " +
                             std::to_string(context.info.id) + "` has the verdicts so far",
                         io.out)))
            return stop;
        std::vector<std::string> round = RIG_TRY(round_of(context, state));
        if (round.size() == 1) {
            auto measured = RIG_TRY(measure(context, {core::StepRole::bisect, round[0], policy}, io,
                                            RIG_TRY(ahead_of(context, round[0]))));
            if (auto stop = RIG_TRY(unfinished(context, measured, io.out)))
                return stop;
            state = RIG_TRY(context.history->mark(measured.step.verdict, round[0]));
            continue;
        }
        io.out << "bisect " << context.info.id << ": " << round.size()
               << " commits at once: " << short_shas(round) << "\n";
        std::vector<StepRequest> requests;
        for (const std::string& sha : round)
            requests.push_back({core::StepRole::bisect, sha, policy});
        auto measured = RIG_TRY(measure_together(context, requests, io));
        for (const Measured& step : measured)
            if (auto stop = RIG_TRY(unfinished(context, step, io.out)))
                return stop;
        // In the order stored (the round's), as a resume replays them.
        for (const Measured& step : measured)
            if (auto marked =
                    RIG_TRY(mark_if_open(context, state, step.step.verdict, step.step.commit)))
                state = *marked;
    }
    if (!state.culprit.empty())
        return Ending();
    return Ending(RIG_TRY(finish(context, core::BisectStatus::inconclusive, "",
                                 "the first bad commit is one of " + short_shas(state.candidates) +
                                     " (skipped or unsure commits); rig names none of them",
                                 io.out)));
}

// 3. Verification: the culprit and its parent again, and with --verify-revert BAD with
// the culprit reverted. Duration and metric: n samples each at least, as their steps.
// Functional: the parent first, with the verification's stricter count of clean samples;
// then the culprit until it reproduces significantly more often than the parent and GOOD
// did.
Expected<core::BisectStatus> verify(Context& context, const StepIo& io, const Endpoints& ends,
                                    const std::string& culprit) {
    const int n = context.options.samples;
    const Policy& policy = ends.policy;
    const bool functional = policy.kind == Policy::Kind::functional;
    Policy parent_policy = policy;
    if (functional) {
        parent_policy.samples = std::max(n, ends.verifying.samples);
        parent_policy.budget = 2 * parent_policy.samples;
    } else {
        parent_policy.budget = parent_policy.samples = std::max(n, 2);
    }
    std::string parent = RIG_TRY(context.history->parent(culprit));
    auto parent_check =
        RIG_TRY(measure_once(context, {core::StepRole::verify_parent, parent, parent_policy}, io));
    if (auto stop = RIG_TRY(unfinished(context, parent_check, io.out)))
        return *stop;
    std::string parent_says = std::string(core::to_string(parent_check.step.verdict)) + " (" +
                              parent_check.step.evidence + ")";
    // A parent that is not good leaves nothing for the culprit's samples to show.
    if (parent_check.step.verdict != core::Verdict::good)
        return finish(context, core::BisectStatus::unverified, culprit,
                      "git named " + short_sha(culprit) + " but it did not verify: parent " +
                          short_sha(parent) + " " + parent_says,
                      io.out);
    Policy culprit_policy = parent_policy;
    if (functional) {
        // Held against the commits before it, the parent and GOOD: more samples than the
        // parent's alone, so a bug that shows half the time verifies within the budget.
        culprit_policy.kind = Policy::Kind::against_parent;
        std::vector<core::Sample> before = parent_check.samples;
        if (const auto* good_step = find_step(context, core::StepRole::good_endpoint)) {
            auto at_good = samples_of(context, *good_step);
            before.insert(before.end(), at_good.begin(), at_good.end());
        }
        for (const auto& sample : before) {
            SampleClass value = classify_sample(context.criterion, sample, model_of(policy));
            culprit_policy.parent_reproduced += value == SampleClass::reproduces;
            culprit_policy.parent_samples +=
                value == SampleClass::reproduces || value == SampleClass::clean;
        }
        culprit_policy.budget = parent_policy.budget;
    }
    auto verified = RIG_TRY(
        measure_once(context, {core::StepRole::verify_culprit, culprit, culprit_policy}, io));
    if (auto stop = RIG_TRY(unfinished(context, verified, io.out)))
        return *stop;
    bool confirmed = verified.step.verdict == core::Verdict::bad;
    std::string why = "culprit " + std::string(core::to_string(verified.step.verdict)) + " (" +
                      verified.step.evidence + "), parent " + parent_says;
    if (context.options.verify_revert && confirmed) {
        const std::string& bad = context.info.bad;
        fs::path patch =
            bisects_folder(context.settings) / std::to_string(context.info.id) / "revert.patch";
        if (auto written = context.history->write_revert_patch(culprit, bad, patch); !written) {
            confirmed = false;
            why += "; the revert on BAD does not apply: " + written.error().message;
        } else {
            auto reverted = RIG_TRY(measure_once(
                context,
                {core::StepRole::verify_revert, bad, parent_policy, {patch.string()}, "+revert"},
                io));
            if (auto stop = RIG_TRY(unfinished(context, reverted, io.out)))
                return *stop;
            confirmed = reverted.step.verdict == core::Verdict::good;
            why += ", BAD with the culprit reverted " +
                   std::string(core::to_string(reverted.step.verdict)) + " (" +
                   reverted.step.evidence + ")";
        }
    }
    return finish(context, confirmed ? core::BisectStatus::culprit : core::BisectStatus::unverified,
                  culprit,
                  confirmed ? short_sha(culprit) + " is the first bad commit, verified"
                            : "git named " + short_sha(culprit) + " but it did not verify: " + why,
                  io.out);
}

// The CPU sets of --jobs (the start's, else the scenario's `jobs:`); none at 1 and on
// backend slurm, whose tasks the cluster places.
Expected<std::vector<core::CpuSet>> cpu_sets(const Context& context, vm::Hypervisor& hypervisor,
                                             std::ostream& out) {
    int jobs = context.options.jobs > 0 ? context.options.jobs : context.scenario.jobs;
    if (jobs <= 1 || context.scenario.backend == core::Backend::slurm)
        return std::vector<core::CpuSet>{};
    auto cpus = RIG_TRY(hypervisor.host_cpus());
    auto sets = RIG_TRY(core::choose_cpu_sets(cpus, context.scenario.guest.cpus, jobs));
    out << "bisect " << context.info.id << ": " << jobs << " guests at once on CPUs "
        << core::cpu_sets_text(sets) << "\n";
    return sets;
}

// The host's CPUs that no guest of a step takes: all but the CPU sets of --jobs, or but one
// guest's vCPUs; all of them when the cluster runs the guests.
Expected<int> spare_cpus(const Context& context, vm::Hypervisor& hypervisor) {
    const int host = static_cast<int>(RIG_TRY(hypervisor.host_cpus()).size());
    if (context.scenario.backend == core::Backend::slurm)
        return host;
    int used = context.cpu_sets.empty() ? context.scenario.guest.cpus : 0;
    for (const core::CpuSet& set : context.cpu_sets)
        used += static_cast<int>(set.size());
    return std::max(0, host - used);
}

// A config bisect is given two configs and nothing that another kind of bisect takes.
Expected<void> check_config_bisect(const StartOptions& options) {
    if (options.good_config.empty() || options.bad_config.empty())
        return fail(ErrorKind::usage, "a config bisect needs both --good-config and --bad-config");
    if (options.series)
        return fail(ErrorKind::usage, "--series and --good-config/--bad-config are two kinds of "
                                      "bisect: give one");
    if (!options.good.empty() || !options.bad.empty())
        return fail(ErrorKind::usage, "--good-config and --bad-config bisect the options on the "
                                      "cell's own commit: drop --good and --bad");
    if (options.verify_revert)
        return fail(ErrorKind::usage, "--verify-revert reverts a commit on BAD, and a config "
                                      "bisect's switches change no file: drop it");
    return {};
}

// One side of a config bisect as olddefconfig resolves it on the cell's commit: a list of
// fragment names ("base,debug", found as the scenario's are) with the kernel's options, or
// a .config file, whose every value is a wish.
Expected<std::string> resolve_config(const std::string& flag, const std::string& given,
                                     const core::CellRecord& record, const fs::path& scenario_dir,
                                     CommitBuilder& builder, std::ostream& out) {
    core::Kernel kernel = record.kernel;
    kernel.ref = record.commit;
    std::vector<std::string> fragments;
    if (fs::is_regular_file(given)) {
        kernel.options.clear();
        for (const auto& [symbol, value] : kernel::parse_config(util::read_file(given)))
            kernel.options[symbol] = kernel::k_wish_mark + value;
        if (kernel.options.empty())
            return fail(ErrorKind::usage, flag + " " + given + " has no CONFIG_ line");
    } else {
        for (const std::string& name : util::split(given, ','))
            if (!util::trim(name).empty())
                fragments.emplace_back(util::trim(name));
    }
    out << util::log_line(util::real_clock(),
                          "configuring " + flag + " " + given + " on " + short_sha(record.commit))
        << "\n"
        << std::flush;
    auto result =
        RIG_TRY(builder.configure(kernel::git_request(kernel, fragments, scenario_dir), out));
    if (result.outcome != core::BuildOutcome::ok)
        return fail(ErrorKind::config, flag + " " + given + " does not configure on " +
                                           short_sha(record.commit) + ": " + result.error_lines +
                                           " (" + result.log.string() + ")");
    return util::read_file(result.config);
}

} // namespace

Expected<int64_t> create_bisect(const StartOptions& options, store::Database& db,
                                const Settings& settings, std::ostream* out) {
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
    const bool configs = !options.good_config.empty() || !options.bad_config.empty();
    if (configs)
        RIG_TRY(check_config_bisect(options));
    auto scenario = RIG_TRY(spec::load_scenario(options.scenario));
    auto cells = RIG_TRY(core::expand(scenario));
    if (options.series) {
        // The series applied: its patches are the history bisected.
        std::erase_if(cells, [](const core::Cell& cell) { return cell.param("series") != "with"; });
        if (cells.empty())
            return fail(ErrorKind::usage, "--series bisects a git kernel's posted series, and no "
                                          "cell of " +
                                              options.scenario.string() +
                                              " applies one (no kernel has `series:`, or the "
                                              "matrix has no `series: with`)");
        if (!options.good.empty() || !options.bad.empty())
            return fail(ErrorKind::usage, "--series bisects from the series' base to its last "
                                          "patch: drop --good and --bad");
    } else if (!configs && (options.good.empty() || options.bad.empty())) {
        return fail(ErrorKind::usage, "rig bisect start needs --good and --bad (or --series, "
                                      "or --good-config and --bad-config)");
    }
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
    host::Facts facts = settings.probe->facts();
    // What the driver will choose (run_bisect), which finds the probe's answer kept.
    facts.accel = RIG_TRY(settings.probe->accel(scenario.guest.accel, settings.cache_dir));
    run.host_facts = facts.to_json();
    run.rig_version = RIG_VERSION;
    run.started_at = util::utc_text(settings.clock->wall_now());
    // The bisect resumes, not its run: `rig run --resume` must never pick this one up.
    run.status = core::RunStatus::finished;
    // Resolved in a scratch repository of rig's first: the bisect's own comes with its id.
    auto history = RIG_TRY(open_history(settings, bisects_folder(settings) / "resolve", repo));
    // The cell whole, so that the bisect needs neither the scenario nor its fragments and
    // patches again.
    core::CellRecord record = RIG_TRY(run::freeze(scenario, {cell}, resolve_in(*history))).front();
    StartOptions stored = options;
    stored.scenario = fs::absolute(options.scenario);
    if (options.series) {
        info.good = record.commit;
        info.bad = RIG_TRY(series_line(*history, record)).back();
    } else if (configs) {
        std::shared_ptr<CommitBuilder> own_builder =
            settings.builder ? nullptr : make_commit_builder(settings.cache_dir, db);
        CommitBuilder& builder = settings.builder ? *settings.builder : *own_builder;
        std::ostringstream quiet;
        std::ostream& shown = out ? *out : quiet;
        stored.good_dot_config = RIG_TRY(resolve_config("--good-config", options.good_config,
                                                        record, scenario_dir, builder, shown));
        stored.bad_dot_config = RIG_TRY(resolve_config("--bad-config", options.bad_config, record,
                                                       scenario_dir, builder, shown));
        info.good = record.commit;
        info.bad = RIG_TRY(config_line(*history, record, stored)).second.back();
    } else {
        info.good = RIG_TRY(history->resolve(options.good));
        info.bad = RIG_TRY(history->resolve(options.bad));
    }
    if (info.good == info.bad)
        return fail(ErrorKind::usage, "--good and --bad are the same commit " + info.good);
    if (RIG_TRY(history->count(info.good, info.bad)) == 0)
        return fail(ErrorKind::usage, "--bad " + options.bad + " does not come after --good " +
                                          options.good + ": git rev-list " + short_sha(info.good) +
                                          ".." + short_sha(info.bad) + " is empty");
    info.cell_record = core::encode(record);
    // Their owner locks exist before their rows do, so that a rig killed before it runs the
    // bisect leaves both reading as interrupted (store::Database::own_run); run_bisect owns
    // them from there.
    std::optional<util::FileLock> run_owner, bisect_owner;
    info.run_id = RIG_TRY(db.begin_run(run, &run_owner));
    info.state = encode_settings(stored);
    return db.begin_bisect(info, &bisect_owner);
}

Expected<core::BisectStatus> run_bisect(int64_t id, store::Database& db, vm::Hypervisor& hypervisor,
                                        const Settings& settings,
                                        const std::atomic<bool>& interrupted, std::ostream& out) {
    // Two rigs on one bisect would both mark commits in its git state and store steps
    // twice: the second one refuses before it reads anything.
    const fs::path dir = bisects_folder(settings) / std::to_string(id);
    std::error_code ec;
    fs::create_directories(dir, ec);
    auto lock = RIG_TRY(util::FileLock::try_acquire(dir / "lock"));
    // And its owner lock in the database's folder: readers see it running only while a rig
    // runs it (store::Database::own_bisect).
    auto owner = lock ? RIG_TRY(db.own_bisect(id)) : std::nullopt;
    if (!lock || !owner)
        return fail(ErrorKind::usage, "bisect " + std::to_string(id) +
                                          " is already running in another rig; wait for it, or "
                                          "stop it and `rig bisect resume " +
                                          std::to_string(id) + "`");
    Context context = RIG_TRY(load(id, db, settings));
    // The run its samples are stored in is running exactly as long as the bisect is.
    auto run_owner = RIG_TRY(db.own_run(context.info.run_id));
    if (context.scenario.backend == core::Backend::libvirt)
        context.libvirt = vm::make_libvirt_hypervisor(context.scenario.uri);
    vm::Hypervisor& guests = context.libvirt ? *context.libvirt : hypervisor;
    context.cpu_sets = RIG_TRY(cpu_sets(context, guests, out));
    context.spare_cpus = RIG_TRY(spare_cpus(context, guests));
    core::BisectStatus current = context.info.status;
    if (current != core::BisectStatus::running && current != core::BisectStatus::stopped &&
        current != core::BisectStatus::interrupted) {
        out << "bisect " << id << " has ended: " << to_string(current) << "\n";
        return current;
    }
    // Once per run: every step's guests get this accelerator.
    context.accel =
        RIG_TRY(settings.probe->accel(context.scenario.guest.accel, settings.cache_dir));
    context.root = RIG_TRY(guest::prepare_guest_root(settings.cache_dir));
    RIG_TRY(db.finish_bisect(id, core::BisectStatus::running, "", ""));
    const std::string& good = context.info.good;
    const std::string& bad = context.info.bad;
    size_t commits = RIG_TRY(context.history->count(good, bad));
    out << "bisect " << id << ": cell " << context.cell.id << " (" << context.cell.kernel_name
        << "), " << context.criterion.text() << ", " << commits << " commits in " << short_sha(good)
        << ".." << short_sha(bad) << ", at most " << build_bound(commits, round_size(context))
        << " builds plus skips" << (context.steps.empty() ? "" : ", resuming") << "\n"
        << std::flush;

    StepIo io{hypervisor, interrupted, out};
    auto drive = [&]() -> Expected<core::BisectStatus> {
        Endpoints ends;
        if (auto stop = RIG_TRY(calibrate(context, io, ends)))
            return *stop;
        GitState state;
        if (auto stop = RIG_TRY(bisect_steps(context, io, ends.policy, state)))
            return *stop;
        if (auto stop = RIG_TRY(
                over_cap(context, state.culprit,
                         "before git's " + short_sha(state.culprit) + " was verified", out)))
            return *stop;
        out << "bisect " << id << ": git names " << short_sha(state.culprit) << "; verifying\n";
        return verify(context, io, ends, state.culprit);
    };
    core::BisectStatus status = RIG_TRY(drive());
    // Its samples' run ends with it; a bisect stopped or interrupted leaves the run to
    // read as interrupted once this rig lets go of it.
    if (status != core::BisectStatus::running && status != core::BisectStatus::stopped &&
        status != core::BisectStatus::interrupted)
        RIG_TRY(db.finish_run(context.info.run_id, core::RunStatus::finished));
    return status;
}

Expected<std::string> bisect_log(int64_t id, store::Database& db, const Settings& settings) {
    Context context = RIG_TRY(load(id, db, settings));
    RIG_TRY(replay(context));
    return context.history->log();
}

} // namespace rig::bisect
