// SPDX-License-Identifier: MIT
// One bisect step: build, sample until decided, store.
#include "bisect/step.hpp"

#include "core/stats.hpp"
#include "guest/initramfs.hpp"
#include "host/facts.hpp"
#include "kernel/build.hpp"
#include "run/batch.hpp"
#include "run/sample.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace rig::bisect {

namespace fs = std::filesystem;

namespace {

// The scenario with the bisected kernel at `sha` (and `patches` added), and its cell.
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

std::string timing_summary(const std::vector<double>& values) {
    if (values.empty())
        return "none usable";
    core::Summary summary = core::summarize(values);
    return "median " + util::fixed(summary.median, 2) + " s, IQR " + util::fixed(summary.q1, 2) +
           "-" + util::fixed(summary.q3, 2) + " s";
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
            return {unusable * 2 > static_cast<int>(classes.size()) ? core::Verdict::skip
                                                                    : policy.calibrates,
                    duration ? std::to_string(values.size()) + " timings, " + timing_summary(values)
                             : "values " + to_text(spread_of(values))};
        }
        if (reproduced > 0)
            return {core::Verdict::bad, counts};
        if (unusable > 0)
            return {core::Verdict::skip, counts + ", " + std::to_string(unusable) + " unusable"};
        return {core::Verdict::good, counts};
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

// The build of a step's commit; nullopt when interrupted.
Expected<std::optional<kernel::BuildResult>> build_commit(const Context& context,
                                                          const CommitCell& target,
                                                          const std::string& prefix,
                                                          const StepIo& io) {
    kernel::BuildSettings build;
    build.cache = context.settings.cache_dir;
    build.interrupted = &io.interrupted;
    std::string last_phase;
    build.progress = [&](const kernel::BuildProgress& status) {
        if (status.phase == last_phase)
            return;
        last_phase = status.phase;
        io.out << prefix << status.phase << "\n" << std::flush;
    };
    const core::Kernel& kernel = target.scenario.kernels[context.cell.kernel];
    auto built = kernel::build_git(
        kernel::git_request(kernel, context.cell.fragments, context.scenario_dir), build);
    if (!built && built.error().kind == ErrorKind::interrupted)
        return std::nullopt;
    auto result = RIG_TRY(std::move(built));
    RIG_TRY(kernel::record_build(context.db, result, kernel.name));
    return result;
}

// A step whose commit does not build: skipped, with the first error line as evidence.
Expected<void> store_build_failure(Context& context, store::BisectStep& step,
                                   const kernel::BuildResult& result) {
    step.verdict = core::Verdict::skip;
    std::string first = result.error_lines.substr(0, result.error_lines.find('\n'));
    // Compiler lines name files in rig's clone; the path inside the tree is what counts.
    if (auto src = first.find("/src/"); src != std::string::npos && first.front() == '/')
        first.erase(0, src + 5);
    step.evidence = std::string(core::to_string(result.outcome)) + ": " + first;
    step.id = RIG_TRY(context.db.add_bisect_step(step));
    context.steps.push_back(step);
    return {};
}

// Takes over the samples of the step's cell that no stored step claims: this step took
// them before a kill. Returns the next repetition number.
int keep_unclaimed_samples(Context& context, Measured& measured) {
    store::BisectStep& step = measured.step;
    std::set<int64_t> claimed;
    for (const auto& other : context.steps)
        if (other.cell_id == step.cell_id)
            claimed.insert(other.samples.begin(), other.samples.end());
    int next_repetition = 0;
    for (const auto& sample : context.samples_by_cell[step.cell_id]) {
        next_repetition = std::max(next_repetition, sample.repetition + 1);
        if (!claimed.count(sample.id)) {
            measured.samples.push_back(sample);
            step.samples.push_back(sample.id);
        }
    }
    return next_repetition;
}

} // namespace

Expected<Decision> sample_until_decided(Context& context, const StepRequest& request,
                                        const StepIo& io, const Boot& boot, Measured& measured,
                                        int next_repetition) {
    const Policy& policy = request.policy;
    std::string accel = host::choose_accel(context.scenario.guest.accel, host::probe().kvm);
    int infra_in_a_row = 0;
    Decision decision = decide(context, policy, measured.samples);
    while (!decision.verdict) {
        if (io.interrupted) {
            measured.interrupted = true;
            return decision;
        }
        int repetition = next_repetition++;
        run::SampleContext sample_context{boot.target.scenario,
                                          boot.target.cell,
                                          repetition,
                                          boot.kernel,
                                          boot.initrd,
                                          samples_dir(context) / boot.target.cell.id /
                                              std::to_string(repetition),
                                          accel,
                                          context.libvirt ? *context.libvirt : io.hypervisor,
                                          io.interrupted,
                                          [](const std::string&) {},
                                          {}};
        run::SampleRun ran = RIG_TRY(take_sample(context, sample_context, io.interrupted, io.out));
        core::Sample& sample = ran.sample;
        if (sample.outcome == core::Outcome::aborted || io.interrupted) {
            measured.interrupted = true;
            return decision;
        }
        sample.id = RIG_TRY(context.db.add_sample(context.info.run_id, sample));
        context.samples_by_cell[measured.step.cell_id].push_back(sample);
        measured.samples.push_back(sample);
        measured.step.samples.push_back(sample.id);
        // Retrying on a full disk would only fail again.
        if (ran.out_of_space) {
            measured.stopped = *ran.out_of_space + ": free space there";
            return decision;
        }
        SampleClass value = classify_sample(context.criterion, sample, policy.targets);
        std::string evidence = sample_evidence(context.criterion, sample, policy.targets);
        io.out << boot.prefix << "sample " << repetition + 1 << ": " << to_string(value) << " ("
               << evidence << ", " << util::fixed(sample.total_seconds, 0) << " s)\n"
               << std::flush;
        if (value == SampleClass::infra) {
            if (++infra_in_a_row > context.options.infra_retries) {
                measured.stopped = std::to_string(infra_in_a_row) + " infra errors in a row at " +
                                   short_sha(request.sha) + ": " + evidence;
                return decision;
            }
            continue;
        }
        infra_in_a_row = 0;
        decision = decide(context, policy, measured.samples);
    }
    return decision;
}

Expected<Measured> measure(Context& context, const StepRequest& request, const StepIo& io) {
    Measured measured;
    store::BisectStep& step = measured.step;
    step.bisect_id = context.info.id;
    step.role = request.role;
    step.commit = request.sha;
    CommitCell target = commit_cell(context, request.sha, request.patches, request.label);
    step.cell_id = target.cell.id;
    RIG_TRY(context.db.add_cells(context.info.run_id, {target.cell}));
    std::string prefix = "bisect " + std::to_string(context.info.id) + ": " +
                         std::string(core::to_string(request.role)) + " " + short_sha(request.sha) +
                         request.label + ": ";

    auto built = RIG_TRY(build_commit(context, target, prefix, io));
    if (!built) {
        measured.interrupted = true;
        return measured;
    }
    const kernel::BuildResult& result = *built;
    step.build_outcome = result.outcome;
    step.build_seconds = result.seconds;
    step.build_cached = result.cache_hit;
    io.out << prefix << "build " << build_label(step) << "\n" << std::flush;
    if (result.outcome != core::BuildOutcome::ok) {
        RIG_TRY(store_build_failure(context, step, result));
        io.out << prefix << "skip (" << step.evidence << ")\n" << std::flush;
        return measured;
    }
    Boot boot{target, *result.artifact,
              RIG_TRY(guest::base_initramfs(*result.artifact, context.settings.cache_dir)), prefix};

    int next_repetition = keep_unclaimed_samples(context, measured);
    if (!measured.samples.empty())
        io.out << prefix << measured.samples.size() << " sample(s) kept from before the resume\n";
    Decision decision =
        RIG_TRY(sample_until_decided(context, request, io, boot, measured, next_repetition));
    if (measured.interrupted || measured.stopped)
        return measured;
    step.verdict = *decision.verdict;
    step.evidence = evidence_of(context, request.policy, measured.samples, decision.reason);
    step.id = RIG_TRY(context.db.add_bisect_step(step));
    context.steps.push_back(step);
    io.out << prefix << core::to_string(step.verdict) << " (" << step.evidence << ")\n"
           << std::flush;
    return measured;
}

Expected<Measured> measure_once(Context& context, const StepRequest& request, const StepIo& io) {
    if (const auto* stored = find_step(context, request.role, request.sha))
        return Measured{*stored, samples_of(context, *stored), false, std::nullopt};
    return measure(context, request, io);
}

} // namespace rig::bisect
