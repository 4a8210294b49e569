// SPDX-License-Identifier: MIT
// One bisect step: build, sample until decided, store.
#include "bisect/step.hpp"

#include "core/stats.hpp"
#include "guest/initramfs.hpp"
#include "kernel/build.hpp"
#include "run/batch.hpp"
#include "run/cells.hpp"
#include "run/kernel_records.hpp"
#include "run/reference.hpp"
#include "run/sample.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

namespace rig::bisect {

namespace fs = std::filesystem;

CommitCell commit_cell(const Context& context, const std::string& sha,
                       const std::vector<std::string>& patches, const std::string& label) {
    CommitCell out{context.scenario, {}};
    core::Kernel& kernel = out.scenario.kernels[context.cell.kernel];
    kernel.name = context.cell.kernel_name + "@" + short_sha(sha) + label;
    kernel.ref = sha;
    if (!context.series_commits.empty()) {
        // A commit of the series' line is built as rig's clone builds any series: the base
        // with the first patches applied (the commits exist in rig's bisect repository only).
        size_t own = kernel.patches.size() - context.record.series.size();
        size_t applied = series_patches_at(context, sha).value_or(context.record.series.size());
        kernel.ref = context.record.commit;
        kernel.patches.resize(own + applied);
    }
    std::map<std::string, std::string> params = context.cell.params;
    if (!context.config_commits.empty()) {
        // A commit of a config bisect's line is the cell's commit with its step's .config:
        // GOOD's values and the switches so far, each a wish, and no fragment.
        size_t made = switches_at(context, sha).value_or(context.switches.size());
        kernel.ref = context.record.commit;
        kernel.config.clear();
        params.erase("config");
        kernel.options = config_step_options(context.good_config, context.switches, made);
    }
    kernel.patches.insert(kernel.patches.end(), patches.begin(), patches.end());
    out.cell = core::make_cell(out.scenario, context.cell.kernel, std::move(params));
    return out;
}

std::string good_cell_id(const Context& context) {
    return commit_cell(context, context.info.good).cell.id;
}

kernel::GitRequest commit_request(const Context& context, const CommitCell& target) {
    return kernel::git_request(target.scenario.kernels[context.cell.kernel], target.cell.fragments,
                               target.scenario.dir);
}

namespace {

std::string timing_summary(const std::vector<double>& values) {
    if (values.empty())
        return "none usable";
    core::Summary summary = core::summarize(values);
    return "median " + util::fixed(summary.median, 2) + " s, IQR " + util::fixed(summary.q1, 2) +
           "-" + util::fixed(summary.q3, 2) + " s";
}

} // namespace

const ErrorModel& model_of(const Policy& policy) {
    static const ErrorModel k_none;
    return policy.errors ? *policy.errors : k_none;
}

namespace {

// The verdict a step's samples give under its policy, or nullopt while more are needed.
Decision decide(const Context& context, const Policy& policy,
                const std::vector<core::Sample>& samples) {
    std::vector<SampleClass> classes;
    std::vector<double> values; // duration, metric
    int unusable = 0;
    for (const auto& sample : samples) {
        SampleClass value = classify_sample(context.criterion, sample, model_of(policy));
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
        // BAD under errors: one sample of a family is no more than a flake shows.
        if (context.criterion.kind == CriterionKind::errors &&
            policy.calibrates == core::Verdict::bad &&
            static_cast<int>(classes.size()) < policy.budget && bad_needs_more(samples))
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
        // GOOD under errors: what its failures mean is settled once both endpoints are in
        // (error_model), so it is not judged by BAD's failures alone here.
        if (context.criterion.kind == CriterionKind::errors &&
            policy.calibrates == core::Verdict::good)
            return {unusable * 2 > static_cast<int>(classes.size()) ? core::Verdict::skip
                                                                    : policy.calibrates,
                    std::to_string(reproduced) + " of " + std::to_string(classes.size()) +
                        " failed"};
        if (reproduced > 0)
            return {core::Verdict::bad, counts};
        if (unusable > 0)
            return {core::Verdict::skip, counts + ", " + std::to_string(unusable) + " unusable"};
        return {core::Verdict::good, counts};
    }
    case Policy::Kind::functional:
        return decide_functional(classes, policy.samples, policy.budget);
    case Policy::Kind::against_parent:
        return decide_against_parent(classes, policy.parent_reproduced, policy.parent_samples,
                                     policy.budget);
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
        SampleClass value = classify_sample(context.criterion, sample, model_of(policy));
        if (value == SampleClass::reproduces) {
            chosen = &sample;
            break;
        }
        if ((value == SampleClass::unusable || value == SampleClass::unsure) && !chosen)
            chosen = &sample;
    }
    // A duration or metric step's reason already has its values; a failed sample still
    // needs telling.
    if (chosen &&
        (!compares_values(context.criterion) ||
         classify_sample(context.criterion, *chosen, model_of(policy)) == SampleClass::unusable))
        out += "; " + sample_evidence(context.criterion, *chosen, model_of(policy));
    return out;
}

// One sample on the scenario's backend: a guest of this machine (QEMU or libvirt, as the
// context says) or a Slurm job; both run run::run_sample, so the records agree.
Expected<run::SampleRun> take_sample(const Context& context, const run::SampleContext& sample,
                                     const std::atomic<bool>& interrupted, std::ostream& out) {
    if (context.scenario.backend != core::Backend::slurm)
        return run::run_sample(sample, context.settings.pacing);
    run::BatchSettings batch;
    batch.jobs_dir = samples_dir(context) / "jobs";
    batch.program = context.settings.program;
    batch.cwd = fs::current_path();
    batch.job_name = run::batch_job_name(context.settings.db, context.info.created_at,
                                         "bisect" + std::to_string(context.info.id));
    batch.options = run::job_options(context.scenario);
    batch.clock = context.settings.clock;
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
    return context.builder->build(commit_request(context, target),
                                  target.scenario.kernels[context.cell.kernel].name, prefix, io.out,
                                  io.interrupted);
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

// The samples a step may still need at once: a fixed or functional step's count; for a
// duration or metric step those its first verdict needs (one, where one sample decides),
// then, while it stays undecided, up to its budget. Less the usable samples it has; at
// least one.
int samples_left(const Context& context, const Policy& policy,
                 const std::vector<core::Sample>& samples) {
    int usable = 0;
    for (const auto& sample : samples) {
        SampleClass value = classify_sample(context.criterion, sample, model_of(policy));
        usable += value != SampleClass::infra && value != SampleClass::aborted;
    }
    // A functional step needs at least its count, then one sample at a time while strays
    // or unsure ones keep it undecided; a step against its parent is tested after every
    // batch of as many samples as guests run at once.
    if (policy.kind == Policy::Kind::against_parent)
        return std::max(1, std::min(static_cast<int>(std::max<size_t>(1, context.cpu_sets.size())),
                                    policy.budget - usable));
    bool counted = policy.kind == Policy::Kind::fixed || policy.kind == Policy::Kind::functional;
    int wanted = counted || usable < policy.samples ? policy.samples : policy.budget;
    return std::max(1, wanted - usable);
}

// One guest of a batch: which step it samples, as which repetition, on which CPU set.
struct Planned {
    Measuring* step;
    int repetition;
    core::CpuSet cpus;
};

// Up to one guest per CPU set, taken round-robin from the undecided steps, each at most
// what it may still need. The sets rotate with `round`, so that every step's samples
// (the endpoints' too) cover the same sets alike.
std::vector<Planned> plan_batch(const Context& context, std::vector<Measuring>& steps,
                                size_t round) {
    size_t slots = std::max<size_t>(1, context.cpu_sets.size());
    std::vector<Planned> batch;
    std::map<Measuring*, int> taken;
    bool added = true;
    while (batch.size() < slots && added) {
        added = false;
        for (Measuring& step : steps) {
            if (batch.size() == slots || step.decision.verdict)
                continue;
            int left = samples_left(context, step.request.policy, step.measured.samples);
            if (taken[&step] >= left)
                continue;
            ++taken[&step];
            core::CpuSet cpus;
            if (!context.cpu_sets.empty())
                cpus = context.cpu_sets[(batch.size() + round) % context.cpu_sets.size()];
            batch.push_back({&step, step.next_repetition++, std::move(cpus)});
            added = true;
        }
    }
    return batch;
}

// The batch's samples, at once when there are several (each guest on its own set).
Expected<std::vector<run::SampleRun>> take_batch(const Context& context,
                                                 const std::vector<Planned>& batch,
                                                 const StepIo& io, core::Accelerator accel) {
    std::vector<run::SampleContext> contexts;
    for (const Planned& planned : batch) {
        const Boot& boot = planned.step->boot;
        contexts.push_back(
            {boot.target.scenario,
             boot.target.cell,
             planned.repetition,
             boot.kernel,
             boot.initrd,
             samples_dir(context) / boot.target.cell.id / std::to_string(planned.repetition),
             accel,
             context.libvirt ? *context.libvirt : io.hypervisor,
             io.interrupted,
             [](const std::string&) {},
             {},
             nullptr,
             planned.cpus,
             context.root});
    }
    if (contexts.size() == 1)
        return std::vector<run::SampleRun>{
            RIG_TRY(take_sample(context, contexts.front(), io.interrupted, io.out))};
    // Guests of this machine only (a Slurm bisect has no CPU sets): run_sample is safe
    // from several threads, each guest with its own folder.
    std::vector<run::SampleRun> runs(contexts.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < contexts.size(); ++i)
        threads.emplace_back(
            [&, i] { runs[i] = run::run_sample(contexts[i], context.settings.pacing); });
    for (std::thread& thread : threads)
        thread.join();
    return runs;
}

// What a commit's outputs are held against (run/reference.hpp): GOOD's earliest sample
// once GOOD has one, then the commit's own first. Under the output criterion GOOD's first
// sample is taken before BAD's (take_reference); else BAD, measured first, has only its own.
std::vector<run::ReferenceCell> references_of(const Context& context, const std::string& cell_id) {
    std::vector<run::ReferenceCell> references;
    const std::string good = good_cell_id(context);
    if (good != cell_id)
        references.push_back({good, "GOOD " + short_sha(context.info.good)});
    references.push_back({cell_id, "this commit"});
    return references;
}

// Stores one sample of a step and judges it; false when the steps must stop measuring.
Expected<bool> take_in(Context& context, const StepIo& io, Measuring& step, run::SampleRun& ran) {
    Measured& measured = step.measured;
    const Policy& policy = step.request.policy;
    core::Sample& sample = ran.sample;
    if (sample.outcome == core::Outcome::aborted || io.interrupted) {
        measured.interrupted = true;
        return false;
    }
    RIG_TRY(run::hold_against_reference(context.db, context.info.run_id,
                                        references_of(context, measured.step.cell_id), sample));
    sample.id = RIG_TRY(context.db.add_sample(context.info.run_id, sample));
    context.samples_by_cell[measured.step.cell_id].push_back(sample);
    measured.samples.push_back(sample);
    measured.step.samples.push_back(sample.id);
    // Retrying on a full disk would only fail again.
    if (ran.out_of_space) {
        measured.stopped = *ran.out_of_space + ": free space there";
        return false;
    }
    SampleClass value = classify_sample(context.criterion, sample, model_of(policy));
    std::string evidence = sample_evidence(context.criterion, sample, model_of(policy));
    io.out << step.boot.prefix << "sample " << sample.repetition + 1 << ": " << to_string(value)
           << " (" << evidence << ", " << util::fixed(sample.total_seconds, 0) << " s"
           << (sample.cpus.empty() ? "" : ", cpus " + sample.cpus) << ")\n"
           << std::flush;
    if (value == SampleClass::infra) {
        if (++step.infra_in_a_row > context.options.infra_retries) {
            measured.stopped = std::to_string(step.infra_in_a_row) + " infra errors in a row at " +
                               short_sha(step.request.sha) + ": " + evidence;
            return false;
        }
        return true;
    }
    step.infra_in_a_row = 0;
    step.decision = decide(context, policy, measured.samples);
    return true;
}

} // namespace

Expected<void> sample_until_decided(Context& context, const StepIo& io,
                                    std::vector<Measuring>& steps) {
    const core::Accelerator accel = context.accel;
    for (Measuring& step : steps)
        step.decision = decide(context, step.request.policy, step.measured.samples);
    auto undecided = [&] {
        return std::any_of(steps.begin(), steps.end(),
                           [](const Measuring& step) { return !step.decision.verdict; });
    };
    for (size_t round = 0; undecided(); ++round) {
        if (io.interrupted) {
            for (Measuring& step : steps)
                step.measured.interrupted = true;
            return {};
        }
        std::vector<Planned> batch = plan_batch(context, steps, round);
        std::vector<run::SampleRun> runs = RIG_TRY(take_batch(context, batch, io, accel));
        bool go_on = true;
        // Every finished sample is stored, in repetition order, even past a stop.
        for (size_t i = 0; i < batch.size(); ++i)
            if (!RIG_TRY(take_in(context, io, *batch[i].step, runs[i])))
                go_on = false;
        if (!go_on) {
            // The steps end together: what stopped one stops the others too.
            std::optional<std::string> why;
            for (const Measuring& step : steps)
                why = why ? why : step.measured.stopped;
            for (Measuring& step : steps) {
                if (step.decision.verdict || step.measured.stopped)
                    continue;
                if (why && !io.interrupted)
                    step.measured.stopped = why;
                else
                    step.measured.interrupted = true;
            }
            return {};
        }
    }
    return {};
}

namespace {

// A step's commit built and ready to sample, or done already (a build that failed, a
// Ctrl-C during the build): then `measured` says so and nullopt is returned.
struct Prepared {
    CommitCell target;
    kernel::BuildResult build;
    std::filesystem::path initrd;
    std::string prefix;
    int next_repetition = 0;
};

Expected<std::optional<Prepared>> prepare_step(Context& context, const StepRequest& request,
                                               const StepIo& io, Measured& measured) {
    store::BisectStep& step = measured.step;
    step.bisect_id = context.info.id;
    step.role = request.role;
    step.commit = request.sha;
    Prepared prepared{
        commit_cell(context, request.sha, request.patches, request.label), {}, {}, "", 0};
    step.cell_id = prepared.target.cell.id;
    RIG_TRY(context.db.add_cells(
        context.info.run_id, RIG_TRY(run::freeze(prepared.target.scenario, {prepared.target.cell},
                                                 resolve_in(*context.history)))));
    prepared.prefix = "bisect " + std::to_string(context.info.id) + ": " +
                      std::string(core::to_string(request.role)) + " " + short_sha(request.sha) +
                      request.label + ": ";

    auto built = RIG_TRY(build_commit(context, prepared.target, prepared.prefix, io));
    if (!built) {
        measured.interrupted = true;
        return std::nullopt;
    }
    prepared.build = std::move(*built);
    step.build_outcome = prepared.build.outcome;
    step.build_seconds = prepared.build.seconds;
    step.build_cached = prepared.build.cache_hit;
    io.out << prepared.prefix << "build " << build_label(step) << "\n" << std::flush;
    if (prepared.build.outcome != core::BuildOutcome::ok) {
        RIG_TRY(store_build_failure(context, step, prepared.build));
        io.out << prepared.prefix << "skip (" << step.evidence << ")\n" << std::flush;
        return std::nullopt;
    }
    prepared.initrd = RIG_TRY(context.builder->initramfs(*prepared.build.artifact));
    prepared.next_repetition = keep_unclaimed_samples(context, measured);
    if (!measured.samples.empty())
        io.out << prepared.prefix << "kept " << measured.samples.size()
               << " sample(s) taken before (before a resume, or as GOOD's reference)\n";
    return prepared;
}

// A decided step stored with its verdict and evidence, and said.
Expected<void> finish_step(Context& context, const Measuring& measuring, const StepIo& io) {
    Measured& measured = measuring.measured;
    if (measured.interrupted || measured.stopped || !measuring.decision.verdict)
        return {};
    store::BisectStep& step = measured.step;
    step.verdict = *measuring.decision.verdict;
    step.evidence =
        evidence_of(context, measuring.request.policy, measured.samples, measuring.decision.reason);
    step.id = RIG_TRY(context.db.add_bisect_step(step));
    context.steps.push_back(step);
    io.out << measuring.boot.prefix << core::to_string(step.verdict) << " (" << step.evidence
           << ")\n"
           << std::flush;
    return {};
}

} // namespace

Expected<std::vector<Measured>>
measure_together(Context& context, const std::vector<StepRequest>& requests, const StepIo& io) {
    std::vector<Measured> measured(requests.size());
    std::vector<std::optional<Prepared>> prepared;
    for (size_t i = 0; i < requests.size(); ++i) {
        if (const auto* step = find_step(context, requests[i].role, requests[i].sha)) {
            measured[i] = Measured{*step, samples_of(context, *step), false, std::nullopt};
            prepared.emplace_back();
            continue;
        }
        prepared.push_back(RIG_TRY(prepare_step(context, requests[i], io, measured[i])));
        if (measured[i].interrupted)
            return measured;
    }
    std::vector<Boot> boots;
    boots.reserve(requests.size());
    std::vector<Measuring> steps;
    steps.reserve(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
        if (!prepared[i])
            continue;
        Prepared& ready = *prepared[i];
        boots.push_back({ready.target, *ready.build.artifact, ready.initrd, ready.prefix});
        steps.push_back({requests[i], boots.back(), measured[i], ready.next_repetition});
    }
    RIG_TRY(sample_until_decided(context, io, steps));
    for (const Measuring& step : steps)
        RIG_TRY(finish_step(context, step, io));
    return measured;
}

namespace {

// Commits built one after another on a thread of their own while the step's guests run,
// stopped when they are done (as a Ctrl-C stops a build: the objects made so far stay for
// the next build of that folder), and joined before the step goes on, on every path. The
// requests are made on the caller's thread.
class BuildAhead final {
public:
    BuildAhead(Context& context, const std::vector<std::string>& shas,
               const std::atomic<bool>& interrupted) {
        if (shas.empty())
            return;
        std::vector<kernel::GitRequest> requests;
        for (const std::string& sha : shas)
            requests.push_back(commit_request(context, commit_cell(context, sha)));
        m_shas = shas;
        m_thread = std::thread([this, builder = context.builder, jobs = context.spare_cpus,
                                requests, &interrupted] {
            const auto started = std::chrono::steady_clock::now();
            for (const kernel::GitRequest& request : requests) {
                if (m_stop || interrupted)
                    break;
                if (auto built = builder->build_ahead(request, jobs, m_stop); !built) {
                    m_error = built.error().message;
                    break;
                }
                if (!m_stop)
                    ++m_built;
            }
            m_seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        });
    }
    BuildAhead(const BuildAhead&) = delete;
    BuildAhead& operator=(const BuildAhead&) = delete;
    ~BuildAhead() { stop(); }

    // Stops what is still building and says what was built.
    void finish(std::ostream& out, const std::string& prefix) {
        if (!m_thread.joinable())
            return;
        stop();
        out << prefix << "built ahead while its guests ran: ";
        for (size_t i = 0; i < m_shas.size(); ++i)
            out << (i ? ", " : "") << util::short_sha(m_shas[i])
                << (i < m_built ? "" : " (not built)");
        out << " in " << util::format_duration(m_seconds, util::DurationStyle::progress)
            << (m_error.empty() ? "" : ": " + m_error) << "\n"
            << std::flush;
    }

private:
    void stop() {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
    }

    std::vector<std::string> m_shas;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
    size_t m_built = 0; // written by the thread, read after the join
    double m_seconds = 0;
    std::string m_error;
};

} // namespace

namespace {

// Whether a measured step is stored (finish_step), or its samples left for the step of the
// same commit measured later.
enum class Claim { stored, unclaimed };

Expected<Measured> measure_step(Context& context, const StepRequest& request, const StepIo& io,
                                const std::vector<std::string>& ahead, Claim claim) {
    Measured measured;
    auto prepared = RIG_TRY(prepare_step(context, request, io, measured));
    if (!prepared)
        return measured;
    Boot boot{prepared->target, *prepared->build.artifact, prepared->initrd, prepared->prefix};
    std::vector<Measuring> steps{{request, boot, measured, prepared->next_repetition}};
    BuildAhead builds(context, ahead, io.interrupted);
    RIG_TRY(sample_until_decided(context, io, steps));
    builds.finish(io.out, prepared->prefix);
    if (claim == Claim::stored)
        RIG_TRY(finish_step(context, steps.front(), io));
    return measured;
}

} // namespace

Expected<Measured> measure(Context& context, const StepRequest& request, const StepIo& io,
                           const std::vector<std::string>& ahead) {
    return measure_step(context, request, io, ahead, Claim::stored);
}

Expected<Measured> measure_unclaimed(Context& context, const StepRequest& request,
                                     const StepIo& io) {
    return measure_step(context, request, io, {}, Claim::unclaimed);
}

Expected<Measured> measure_once(Context& context, const StepRequest& request, const StepIo& io) {
    if (const auto* stored = find_step(context, request.role, request.sha))
        return Measured{*stored, samples_of(context, *stored), false, std::nullopt};
    return measure(context, request, io);
}

} // namespace rig::bisect
