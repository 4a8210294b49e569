// SPDX-License-Identifier: MIT
// The run loop: fetch kernels and build initramfs images once, then sample round by round.
#include "run/runner.hpp"

#include "core/matrix.hpp"
#include "guest/initramfs.hpp"
#include "host/facts.hpp"
#include "kernel/artifact.hpp"
#include "rig_config.hpp"
#include "run/progress.hpp"
#include "run/sample.hpp"
#include "util/hash.hpp"

#include <map>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

struct PreparedKernel {
    kernel::Artifact artifact;
    fs::path base_initrd;
};

std::string cell_label(const core::Cell& cell) {
    std::string label = cell.kernel_name + " " + cell.config + " " + cell.param("fs");
    if (auto msize = cell.msize())
        label += " msize=" + std::to_string(*msize);
    if (!cell.cache().empty())
        label += " cache=" + cell.cache();
    return label;
}

Expected<PreparedKernel> prepare_kernel(const core::Kernel& spec, const RunSettings& settings,
                                        store::Database& db, Progress& progress) {
    progress.note("kernel " + spec.name + ": fetching and preparing");
    auto artifact = kernel::prebuilt(spec, settings.cache_dir, [&](const std::string& phase) {
        progress.note("kernel " + spec.name + ": " + phase);
    });
    if (!artifact)
        return tl::unexpected(artifact.error());
    store::KernelArtifact record;
    record.cache_key = artifact->id;
    record.source = spec.source;
    record.name = spec.name;
    record.release = artifact->release;
    record.package = artifact->package;
    record.package_version = artifact->package_version;
    record.image_sha256 = artifact->image_sha256;
    record.image_path = artifact->image.string();
    record.modules_path = artifact->modules_dir.string();
    RIG_TRY(db.add_kernel_artifact(record));
    progress.note("kernel " + spec.name + ": " + artifact->release + " (" +
                  (artifact->package_version.empty() ? artifact->id : artifact->package_version) +
                  "), building initramfs");
    auto initrd = RIG_TRY(guest::base_initramfs(*artifact, settings.cache_dir));
    return PreparedKernel{*artifact, initrd};
}

} // namespace

Expected<RunSummary> run_scenario(const core::Scenario& scenario, store::Database& db,
                                  vm::Hypervisor& hypervisor, const RunSettings& settings,
                                  int64_t run_id, const std::atomic<bool>& interrupted,
                                  std::ostream& out) {
    auto cells = RIG_TRY(core::expand(scenario));
    host::Facts facts = host::probe();
    std::string accel = host::choose_accel(scenario.guest.accel, facts.kvm);
    if (accel == "kvm" && !facts.kvm)
        return fail(ErrorKind::infra, "guest.accel is kvm but /dev/kvm is not usable here");

    RunSummary summary;
    if (run_id == 0) {
        store::RunInfo info;
        info.scenario_name = scenario.name;
        info.scenario_file = scenario.file;
        info.scenario_text = scenario.text;
        info.scenario_hash = util::sha256_hex(scenario.text);
        info.host_facts = facts.to_json();
        info.rig_version = RIG_VERSION;
        run_id = RIG_TRY(db.begin_run(info));
    }
    summary.run_id = run_id;
    RIG_TRY(db.add_cells(run_id, cells));
    store::SampleKeys finished = RIG_TRY(db.finished_samples(run_id));

    // Rounds rather than cell after cell: slow drift of the host then touches every
    // cell alike instead of biasing the last ones. Warmups come first and are not stored.
    struct Planned {
        const core::Cell* cell;
        int repetition; // negative: warmup
    };
    std::vector<Planned> plan;
    bool resuming = !finished.empty();
    for (int round = resuming ? 0 : -scenario.warmup; round < scenario.repeat; ++round)
        for (const core::Cell& cell : cells)
            if (round < 0 || !finished.count({cell.id, round}))
                plan.push_back({&cell, round});
    summary.samples_skipped = finished.size();

    out << "run " << run_id << ": " << scenario.name << ", " << cells.size() << " cells x "
        << scenario.repeat << " repeats";
    if (!resuming && scenario.warmup > 0)
        out << " + " << scenario.warmup << " warmup rounds";
    if (resuming)
        out << ", resuming: " << finished.size() << " samples already done";
    out << ", accel " << accel << ", backend " << hypervisor.name() << "\n";

    Progress progress(out, settings.tty, plan.size());
    std::map<size_t, PreparedKernel> kernels;
    fs::path run_dir = settings.results_dir / "runs" / std::to_string(run_id);
    for (size_t i = 0; i < plan.size() && !interrupted; ++i) {
        const core::Cell& cell = *plan[i].cell;
        int repetition = plan[i].repetition;
        std::string label =
            cell_label(cell) + (repetition < 0 ? " warmup"
                                               : " rep " + std::to_string(repetition + 1) + "/" +
                                                     std::to_string(scenario.repeat));
        progress.begin_sample(i, label);
        if (!kernels.count(cell.kernel)) {
            progress.phase("preparing kernel");
            kernels[cell.kernel] =
                RIG_TRY(prepare_kernel(scenario.kernels[cell.kernel], settings, db, progress));
        }
        const PreparedKernel& kernel = kernels[cell.kernel];
        SampleContext context{scenario,
                              cell,
                              repetition,
                              kernel.artifact,
                              kernel.base_initrd,
                              run_dir / cell.id /
                                  (repetition < 0 ? "warmup" : std::to_string(repetition)),
                              accel,
                              hypervisor,
                              interrupted,
                              [&](const std::string& name) { progress.phase(name); },
                              [&] { progress.tick(); }};
        core::Sample sample = run_sample(context);
        progress.end_sample(std::string(core::to_string(sample.outcome)), sample.total_seconds);
        if (repetition < 0)
            continue;
        // The partial sample of an interrupted run is stored as aborted, so the resumed
        // run knows to redo exactly that one.
        RIG_TRY(db.add_sample(run_id, sample));
        ++summary.samples_run;
        if (sample.outcome != core::Outcome::ok)
            ++summary.samples_not_ok;
    }
    summary.interrupted = interrupted;
    RIG_TRY(db.finish_run(run_id, interrupted ? "interrupted" : "finished"));
    return summary;
}

} // namespace rig::run
