// SPDX-License-Identifier: MIT
// Running one sample: prepare, boot, watch, classify and collect.
#include "run/sample.hpp"

#include "core/classify.hpp"
#include "core/evidence.hpp"
#include "core/fs.hpp"
#include "core/profile.hpp"
#include "run/coherency.hpp"
#include "run/guest_output.hpp"
#include "run/outputs.hpp"
#include "run/sample_collect.hpp"
#include "run/sample_launch.hpp"
#include "run/sample_watch.hpp"
#include "run/server_side.hpp"
#include "run/share_mount.hpp"
#include "util/clock.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"
#include "workload/readback.hpp"

#include <chrono>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

// The sample's identity and the mount rig asks for, before anything runs.
core::Sample new_sample(const SampleContext& context) {
    core::Sample sample;
    sample.cell_id = context.cell.id;
    sample.repetition = context.repetition;
    sample.accel = core::to_string(context.accel);
    sample.cpus = core::cpu_list_text(context.host_cpus);
    sample.kernel_artifact = context.kernel.id;
    // The machine's time, as the guest's watch below: a sample's times are real ones.
    sample.started_at = util::utc_text(std::chrono::system_clock::now());
    sample.mount_requested = core::mount_requested(context.cell);
    return sample;
}

// A profile that probed nothing says so on the cell as a warning line: an empty set of
// function counts would read as functions never called.
void note_empty_profile(const core::Guest& guest, core::Sample& sample) {
    if (guest.profile.empty() || !core::measured(sample.outcome))
        return;
    std::optional<double> probed = core::metric_value(sample, core::k_profiled_metric);
    if (probed && *probed > 0)
        return;
    std::string line = std::string("function profile unavailable: ") +
                       (probed ? "no function of the kernel matched the profile"
                               : "the kernel has no kprobe events");
    sample.lines.push_back({core::Severity::warning, "rig", line, line});
    ++sample.warning_count;
}

// The workload's outputs as the guest saw them, against the server's copy (the share here,
// or what a fuse cell's daemon served from) and what a readback file was written with,
// at each check: each wrong one is an error line, and the sample wrong-output.
void check_outputs_of(const SampleContext& context, const guest::AgentReport& report,
                      const fs::path& share, const ServerSide* server_side,
                      core::SampleFacts& facts, core::Sample& sample, std::string& note) {
    using guest::AgentReport;
    const core::Workload& workload = context.scenario.workload;
    const bool fuse = context.cell.fs().mount == core::GuestMount::guest_fuse;
    auto manifest = [](const std::string& text) {
        return parse_manifest(text, text.size() >= AgentReport::k_max_outputs);
    };
    auto text_at = [](const std::string& check, bool hashed, const std::string& end,
                      const std::map<std::string, std::string>& at) -> const std::string* {
        if (check.empty())
            return hashed ? &end : nullptr;
        auto found = at.find(check);
        return found == at.end() ? nullptr : &found->second;
    };
    OutputCheck all;
    bool hashed = false;
    std::map<std::string, std::string> kept; // whole manifests, for later samples
    for (const std::string& check : core::checks(workload)) {
        const std::string* seen_text =
            text_at(check, report.outputs_hashed, report.outputs_text, report.outputs_at);
        if (!seen_text)
            continue;
        hashed = true;
        std::optional<Manifest> server;
        if (fuse) {
            if (const std::string* served =
                    text_at(check, report.served_hashed, report.served_text, report.served_at))
                server = manifest(*served);
        } else if (!check.empty()) {
            if (const Manifest* at = server_side ? server_side->manifest_at(check) : nullptr)
                server = *at;
        } else if (auto folder = hash_folder(share, core::output_globs(workload))) {
            server = std::move(*folder);
        } else {
            note += "outputs: the share was not hashed: " + folder.error().message + "\n";
        }
        // A readback's files are known at its end (it has no phases).
        std::map<std::string, std::string> expected;
        if (workload.kind == core::WorkloadKind::readback && check.empty())
            expected = workload::readback_expected(workload.readback);
        Manifest seen = manifest(*seen_text);
        if (seen.whole)
            kept[check] = *seen_text;
        OutputCheck one = check_outputs(seen, server, expected);
        if (!workload.check_after.empty()) {
            const std::string prefix = core::check_prefix(workload, check);
            sample.metrics.push_back(
                {prefix + "outputs.files", static_cast<double>(one.files), "files"});
            sample.metrics.push_back(
                {prefix + "outputs.wrong", static_cast<double>(one.wrong.size()), "files"});
        }
        if (!check.empty())
            place_after(one, check);
        add_check(all, std::move(one));
    }
    if (!hashed)
        return;
    // Kept for later samples to be held against (run/reference.hpp); a cut one is not.
    sample.outputs = join_manifests(kept);
    sample.metrics.push_back({"outputs.files", static_cast<double>(all.files), "files"});
    sample.metrics.push_back({"outputs.wrong", static_cast<double>(all.wrong.size()), "files"});
    if (all.wrong.empty())
        return;
    facts.wrong_outputs = static_cast<int>(all.wrong.size());
    record_wrong(all, "outputs that are not what they should be", note, sample);
}

// The coherency probe: what the guest saw after each change, against the mount's promise;
// a broken promise is wrong output, like a file that never reached the server.
void check_coherency_of(const SampleContext& context, const guest::AgentReport& report,
                        core::SampleFacts& facts, core::Sample& sample, std::string& note) {
    const core::Workload& workload = context.scenario.workload;
    // A guest that never got past its workload probed nothing, which says nothing.
    if (!workload.coherency.enabled() || !report.end_ns)
        return;
    const core::Coherence promise = core::coherence(context.cell);
    CoherencyCheck check = check_coherency(workload, report.stale, promise);
    for (core::Metric& metric : check.metrics)
        sample.metrics.push_back(std::move(metric));
    if (!check.lines.empty())
        note += "coherency probe (the mount promises " + core::describe(promise) + "):\n";
    for (core::ErrorLine& line : check.lines) {
        note += "  " + line.line + "\n";
        (line.severity == core::Severity::error ? sample.error_count : sample.warning_count)++;
        sample.lines.push_back(std::move(line));
    }
    facts.wrong_outputs += check.broken;
}

// Watches a booted guest to its stop, then turns what it said into the sample.
void watch_guest(const SampleContext& context, const Pacing& pacing, const Launch& launch,
                 vm::Vm& guest, Clock::time_point launched, SpaceWatch& space,
                 const fs::path& share, core::Sample& sample) {
    core::SampleFacts facts;
    std::string note;
    Watch watch(context, pacing, launch.spec, guest, space, launched);
    std::optional<ServerSide> server;
    if (!launch.acks.empty()) {
        server.emplace(context.scenario.workload, share, launch.acks);
        watch.serve(&*server);
    }
    watch.until_stop(facts, note);
    guest.destroy();
    watch.take_rest();
    Clock::time_point finished = Clock::now();

    const GuestOutput& output = watch.output();
    output.describe(context.cell.fs(), facts, sample);
    if (server)
        note += server->note();
    check_outputs_of(context, output.report(), share, server ? &*server : nullptr, facts, sample,
                     note);
    check_coherency_of(context, output.report(), facts, sample, note);
    // Beside console.log, which has only warnings and worse up to a panic.
    if (!output.report().kernel_log.empty())
        (void)util::write_file_atomically(context.dir / "kernel.log", output.report().kernel_log,
                                          util::Sync::skip);
    space.look();
    facts.out_of_space = space.full();
    sample.outcome = core::classify(facts);
    add_host_metrics(sample, output.report(), launch.counted,
                     core::paused_phases(context.scenario.workload), note);
    note_empty_profile(context.scenario.guest, sample);
    sample.total_seconds = seconds_between(watch.launched(), finished);
    add_cpu_figures(sample, watch);
    if (sample.outcome == core::Outcome::infra_error)
        note += helper_logs(context.dir);
    note += output.channel_note();
    sample.evidence = evidence_for(sample.outcome, output.report(), output.console_tail(), note);
}

// A failed compile is data about the cell, like one in a guest: the compiler's lines are
// the sample's error lines and evidence, and no guest boots.
void build_failed(core::Sample& sample, const std::string& what, const std::string& error_lines) {
    sample.outcome = core::Outcome::build_failed;
    sample.evidence = what + ":\n" + error_lines + "\n";
    for (const std::string& line : util::split(error_lines, '\n'))
        if (!line.empty())
            sample.lines.push_back(
                {core::Severity::error, "build", line, core::signature_of(line)});
    sample.error_count = static_cast<int>(sample.lines.size());
}

std::string kernel_failure_text(const KernelBuildFailure& failure) {
    return failure.kernel + " does not build" +
           (failure.log.empty() ? std::string() : " (log: " + failure.log.string() + ")");
}

} // namespace

core::Sample kernel_build_failed(const core::Cell& cell, int repetition,
                                 const KernelBuildFailure& failure) {
    core::Sample sample;
    sample.cell_id = cell.id;
    sample.repetition = repetition;
    sample.started_at = util::utc_text(std::chrono::system_clock::now());
    sample.mount_requested = core::mount_requested(cell);
    build_failed(sample, kernel_failure_text(failure), failure.error_lines);
    return sample;
}

SampleRun run_sample(const SampleContext& context, const Pacing& pacing) {
    core::Sample sample = new_sample(context);
    if (context.kernel_failure) {
        build_failed(sample, kernel_failure_text(*context.kernel_failure),
                     context.kernel_failure->error_lines);
        return {std::move(sample), std::nullopt};
    }
    if (context.module && context.module->outcome == kernel::ModuleOutcome::build_failed) {
        build_failed(sample, "the module does not compile against kernel " + context.kernel.release,
                     context.module->error_lines);
        return {std::move(sample), std::nullopt};
    }
    std::error_code ec;
    fs::remove_all(context.dir, ec);
    fs::create_directories(context.dir, ec);
    SpaceWatch space(context.dir);
    // A guest that never ran: its outcome is infra-error, and why is its evidence.
    auto infra = [&](const std::string& why) {
        space.look(); // a write of rig's that failed may be why
        core::SampleFacts facts;
        facts.out_of_space = space.full();
        facts.start_failed = true;
        sample.outcome = core::classify(facts);
        sample.evidence = why;
        return settle(std::move(sample), space, context.dir);
    };

    fs::path share = context.dir / "share";
    // A nearly full results folder boots nothing: the run stops, to resume once freed.
    if (space.refuse_start())
        return infra("the guest was not booted");
    // libvirtd's QEMU would see the folder under the mount: its shares are not capped.
    auto capped = ShareMount::mount(
        share, context.hypervisor.sees_rigs_mounts() ? context.scenario.guest.share_limit : 0);
    if (!capped)
        return infra(capped.error().message);
    if (*capped)
        space.watch_share(share, (*capped)->cap());
    auto launch = prepare_launch(context, share);
    if (!launch)
        return infra(launch.error().message);
    sample.machine = core::to_string(launch->spec.machine);
    space.look();
    if (space.full())
        return infra("the guest was not booted");
    if (context.on_phase)
        context.on_phase("booting");
    Clock::time_point launched = Clock::now();
    auto started = context.hypervisor.start(launch->spec);
    if (!started)
        return infra(started.error().message);
    watch_guest(context, pacing, *launch, **started, launched, space, share, sample);
    capped->reset();
    fs::remove_all(share, ec);
    if (!launch->spec.scratch_disk.empty())
        fs::remove(launch->spec.scratch_disk, ec);
    return settle(std::move(sample), space, context.dir);
}

} // namespace rig::run
