// SPDX-License-Identifier: MIT
// The run loop: fetch kernels and build initramfs images once, then sample round by round.
#include "run/runner.hpp"

#include "core/diagnostic.hpp"
#include "core/matrix.hpp"
#include "core/results_folder.hpp"
#include "guest/fuse.hpp"
#include "guest/root.hpp"
#include "kernel/artifact.hpp"
#include "rig_config.hpp"
#include "run/batch.hpp"
#include "run/cells.hpp"
#include "run/hosts.hpp"
#include "run/kernel_provider.hpp"
#include "run/progress.hpp"
#include "run/reference.hpp"
#include "run/sample.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

std::string cell_label(const core::Cell& cell) {
    std::string label = cell.kernel_name + " " + cell.config + " " + cell.param("fs");
    if (auto msize = cell.msize())
        label += " msize=" + std::to_string(*msize);
    if (!cell.cache().empty())
        label += " cache=" + cell.cache();
    return label;
}

// Git kernels are built per fragment list: cells of one kernel with other configs need
// other artifacts.
using KernelKey = std::pair<size_t, std::vector<std::string>>;

KernelKey kernel_key(const core::Cell& cell) {
    return {cell.kernel, cell.fragments};
}

// Rounds rather than cell after cell: slow drift of the host then touches every
// cell alike instead of biasing the last ones. Warmups come first and are not stored.
struct Planned {
    const core::Cell* cell;
    int repetition; // negative: warmup
};

std::string sample_label(const core::Scenario& scenario, const Planned& planned) {
    return cell_label(*planned.cell) + (planned.repetition < 0
                                            ? " warmup"
                                            : " rep " + std::to_string(planned.repetition + 1) +
                                                  "/" + std::to_string(scenario.repeat));
}

// What became of the sample in flight, for out_of_space_error: it is stored when its
// record still fits; a warmup never is.
std::string sample_fate(int repetition, const Expected<int64_t>& stored) {
    if (repetition < 0)
        return "it was a warmup, not stored";
    if (stored)
        return "the sample is stored as infra-error";
    return "the sample was not stored (" + stored.error().message + ")";
}

// The programs the samples need, looked for before a run begins: a missing QEMU, virtiofsd
// or rig-fuse is one clear error, and no run is stored (or, on a resume, changed).
Expected<void> find_programs(const std::vector<core::Cell>& cells, const std::vector<Host>& hosts) {
    std::set<vm::ShareKind> kinds{vm::ShareKind::v9p};
    bool fuse = false;
    for (const core::Cell& cell : cells) {
        kinds.insert(cell.fs().share);
        fuse = fuse || cell.fs().daemon == core::Daemon::guest_fuse;
    }
    for (const Host& host : hosts)
        RIG_TRY(host.hypervisor->find_programs(kinds));
    if (fuse)
        RIG_TRY(guest::find_fuse_daemon());
    return {};
}

// A run that ran out of space stops: every later sample would fail alike.
Error out_of_space_error(const std::string& reason, const std::string& fate, int64_t run_id) {
    return Error{ErrorKind::infra, reason + "; " + fate +
                                       ".\nFree space there, or give the results another "
                                       "filesystem with --db, then continue with `rig run "
                                       "--resume " +
                                       std::to_string(run_id) + "`"};
}

// What the samples of a run share, for the several-host loop.
struct RunState {
    const core::Scenario& scenario;
    store::Database& db;
    const RunSettings& settings;
    int64_t run_id;
    core::Accelerator accel;
    fs::path run_dir;
    const guest::GuestRoot& root;
    const std::atomic<bool>& interrupted;
    Progress& progress;
    RunSummary& summary;
    KernelProvider& kernels;
    const std::vector<core::Cell>& cells;
};

// One sample of the plan on `hypervisor`, its logs and share in the run's folder.
SampleContext sample_context(const RunState& state, const Planned& planned,
                             const PreparedKernel& kernel, vm::Hypervisor& hypervisor,
                             std::function<void(const std::string&)> on_phase,
                             std::function<void()> on_tick, core::CpuSet cpus = {}) {
    return SampleContext{
        state.scenario,
        *planned.cell,
        planned.repetition,
        kernel.artifact,
        kernel.base_initrd,
        state.run_dir / planned.cell->id /
            (planned.repetition < 0 ? "warmup" : std::to_string(planned.repetition)),
        state.accel,
        hypervisor,
        state.interrupted,
        std::move(on_phase),
        std::move(on_tick),
        kernel.module ? &*kernel.module : nullptr,
        std::move(cpus),
        state.root,
        kernel.build_failure ? &*kernel.build_failure : nullptr};
}

// Every kernel the plan needs, prepared in plan order; nullopt when Ctrl-C stopped a build.
Expected<std::optional<std::map<KernelKey, PreparedKernel>>>
prepare_kernels(const std::vector<Planned>& plan, RunState& state) {
    std::map<KernelKey, PreparedKernel> kernels;
    for (const Planned& planned : plan) {
        if (kernels.count(kernel_key(*planned.cell)))
            continue;
        auto prepared = state.kernels.prepare(state.scenario, *planned.cell, state.progress);
        if (!prepared && prepared.error().kind == ErrorKind::interrupted)
            return std::nullopt;
        kernels[kernel_key(*planned.cell)] = RIG_TRY(std::move(prepared));
    }
    return kernels;
}

// The plan on one hypervisor, sample by sample, each kernel prepared when first needed.
Expected<void> run_on_one_host(const std::vector<Planned>& plan, vm::Hypervisor& hypervisor,
                               RunState& state) {
    const core::Scenario& scenario = state.scenario;
    const std::atomic<bool>& interrupted = state.interrupted;
    Progress& progress = state.progress;
    std::map<KernelKey, PreparedKernel> kernels;
    for (size_t i = 0; i < plan.size() && !interrupted; ++i) {
        const core::Cell& cell = *plan[i].cell;
        int repetition = plan[i].repetition;
        std::string label = sample_label(scenario, plan[i]);
        progress.begin_sample(i, label);
        if (!kernels.count(kernel_key(cell))) {
            progress.phase("preparing kernel");
            auto prepared = state.kernels.prepare(scenario, cell, progress);
            if (!prepared && prepared.error().kind == ErrorKind::interrupted)
                break; // Ctrl-C stopped a build: the run ends as interrupted
            kernels[kernel_key(cell)] = RIG_TRY(std::move(prepared));
        }
        const PreparedKernel& kernel = kernels[kernel_key(cell)];
        SampleRun ran = run_sample(sample_context(
                                       state, plan[i], kernel, hypervisor,
                                       [&](const std::string& name) { progress.phase(name); },
                                       [&] { progress.tick(); }),
                                   state.settings.pacing);
        core::Sample& sample = ran.sample;
        if (repetition >= 0)
            RIG_TRY(hold_against_reference(state.db, state.run_id, state.cells, sample));
        progress.end_sample(core::outcome_text(sample), sample.total_seconds);
        // The partial sample of an interrupted run is stored as aborted, so the resumed
        // run knows to redo exactly that one. Warmups are not stored.
        Expected<int64_t> stored =
            repetition < 0 ? Expected<int64_t>(0) : state.db.add_sample(state.run_id, sample);
        if (ran.out_of_space)
            return tl::unexpected(out_of_space_error(
                *ran.out_of_space, sample_fate(repetition, stored), state.run_id));
        RIG_TRY(std::move(stored));
        if (repetition < 0)
            continue;
        ++state.summary.samples_run;
        if (sample.outcome != core::Outcome::ok)
            ++state.summary.samples_not_ok;
    }
    return {};
}

// The run's hosts, stored as up with no samples yet.
Expected<std::vector<store::RunHost>> register_hosts(const std::vector<Host>& hosts,
                                                     const RunState& state) {
    std::vector<store::RunHost> records(hosts.size());
    for (size_t h = 0; h < hosts.size(); ++h) {
        records[h].uri = hosts[h].name;
        RIG_TRY(state.db.set_run_host(state.run_id, records[h]));
    }
    return records;
}

// A place samples run at once with others: a host, and there a CPU set of its own under
// --jobs (empty: wherever the host's scheduler puts it).
struct Slot {
    size_t host = 0;
    core::CpuSet cpus;
};

std::string slot_name(const std::vector<Host>& hosts, const Slot& slot) {
    return hosts[slot.host].name +
           (slot.cpus.empty() ? "" : " cpus " + core::cpu_list_text(slot.cpus));
}

// The slots of `jobs` guests per host: one unpinned slot per host at --jobs 1, else each
// host's CPU sets. Too many jobs for a host is the error that says what fits; a scenario's
// `jobs:` is named by its place in the file.
Expected<std::vector<Slot>> make_slots(const std::vector<Host>& hosts,
                                       const core::Scenario& scenario, int jobs, bool from_file) {
    std::vector<Slot> slots;
    for (size_t h = 0; h < hosts.size(); ++h) {
        if (jobs == 1) {
            slots.push_back({h, {}});
            continue;
        }
        auto cpus = RIG_TRY(hosts[h].hypervisor->host_cpus());
        auto sets = core::choose_cpu_sets(cpus, scenario.guest.cpus, jobs);
        if (!sets) {
            std::string where = hosts.size() > 1 ? " on host " + hosts[h].name : "";
            if (from_file)
                return core::config_error(scenario.file, scenario.jobs_loc, "jobs",
                                          sets.error().message + where);
            return fail(ErrorKind::usage, sets.error().message + where);
        }
        for (core::CpuSet& set : *sets)
            slots.push_back({h, std::move(set)});
    }
    return slots;
}

// A sample of a slot stored (a warmup is not) and its host's count raised; the error that
// stops the run, if any. Called under the run's lock.
std::optional<Error> store_slot_sample(RunState& state, const Planned& planned, SampleRun& ran,
                                       store::RunHost& host) {
    if (planned.repetition >= 0)
        if (auto held = hold_against_reference(state.db, state.run_id, state.cells, ran.sample);
            !held)
            return held.error();
    Expected<int64_t> stored = planned.repetition < 0
                                   ? Expected<int64_t>(0)
                                   : state.db.add_sample(state.run_id, ran.sample);
    if (ran.out_of_space)
        return out_of_space_error(*ran.out_of_space, sample_fate(planned.repetition, stored),
                                  state.run_id);
    if (planned.repetition < 0)
        return std::nullopt;
    ++host.samples;
    auto marked =
        stored ? state.db.set_run_host(state.run_id, host) : tl::unexpected(stored.error());
    if (!marked)
        return marked.error();
    ++state.summary.samples_run;
    if (ran.sample.outcome != core::Outcome::ok)
        ++state.summary.samples_not_ok;
    return std::nullopt;
}

// The slots as run/hosts.hpp pools them. A cell's samples go round the slots: a slow CPU
// set then touches every cell alike.
Slots slot_pool(const std::vector<Planned>& plan, const std::vector<Slot>& slots) {
    auto cell_index = std::make_shared<std::map<const core::Cell*, size_t>>();
    for (const Planned& planned : plan)
        cell_index->emplace(planned.cell, cell_index->size());
    Slots pool;
    for (const Slot& slot : slots)
        pool.host_of.push_back(slot.host);
    pool.group = [&plan, cell_index](size_t job) { return cell_index->at(plan[job].cell); };
    pool.window = cell_index->size();
    return pool;
}

Expected<void> run_on_slots(const std::vector<Planned>& plan, const std::vector<Host>& hosts,
                            const std::vector<Slot>& slots, RunState& state) {
    // Kernels before the threads start: fetching one writes the cache and the store.
    auto prepared = RIG_TRY(prepare_kernels(plan, state));
    if (!prepared)
        return {}; // Ctrl-C stopped a build: the run ends as interrupted
    const std::map<KernelKey, PreparedKernel>& kernels = *prepared;
    // One lock for the store, the summary and the progress lines.
    std::mutex mutex;
    std::optional<Error> failure;
    std::vector<store::RunHost> records = RIG_TRY(register_hosts(hosts, state));
    std::string total = std::to_string(plan.size());
    size_t running = 0;
    size_t done = 0;
    state.progress.parallel(slots.size());

    auto run = [&](size_t job, size_t s) -> JobResult {
        const Planned& planned = plan[job];
        const Slot& slot = slots[s];
        vm::Hypervisor& hypervisor = *hosts[slot.host].hypervisor;
        std::string prefix = "[" + std::to_string(job + 1) + "/" + total + "] " +
                             sample_label(state.scenario, planned) + " on " +
                             slot_name(hosts, slot) + ": ";
        auto note = [&](const std::string& text) {
            std::lock_guard lock(mutex);
            state.progress.note(prefix + text);
        };
        {
            std::lock_guard lock(mutex);
            ++running;
        }
        const PreparedKernel& kernel = kernels.at(kernel_key(*planned.cell));
        SampleRun ran =
            run_sample(sample_context(state, planned, kernel, hypervisor, note, {}, slot.cpus),
                       state.settings.pacing);
        const core::Sample& sample = ran.sample;
        // A sample that failed because its host went away is not data about the cell.
        if (sample.outcome == core::Outcome::infra_error && !state.interrupted && !ran.out_of_space)
            if (auto up = hypervisor.reachable(); !up) {
                std::lock_guard lock(mutex);
                --running;
                return {JobEnd::host_lost, up.error().message};
            }
        std::lock_guard lock(mutex);
        --running;
        ++done;
        if (!failure)
            failure = store_slot_sample(state, planned, ran, records[slot.host]);
        // Said once stored: the reference check may have made it wrong-output.
        state.progress.note(
            prefix + core::outcome_text(sample) + " in " +
            util::format_duration(sample.total_seconds, util::DurationStyle::progress));
        state.progress.finished(sample.total_seconds);
        state.progress.batch("guests", plan.size() - done - running, running, done);
        return {};
    };
    auto on_lost = [&](size_t h, const std::string& why) {
        std::lock_guard lock(mutex);
        records[h].status = core::HostStatus::dropped;
        records[h].reason = why;
        state.progress.note("host " + hosts[h].name + " dropped out (" + why +
                            "); its samples go to another host");
        if (auto marked = state.db.set_run_host(state.run_id, records[h]); !marked && !failure)
            failure = marked.error();
    };
    auto stop = [&] {
        std::lock_guard lock(mutex);
        return state.interrupted || failure.has_value();
    };
    std::vector<size_t> left =
        run::run_on_slots(plan.size(), slot_pool(plan, slots), run, on_lost, stop);
    if (failure)
        return tl::unexpected(*failure);
    if (!left.empty() && !state.interrupted)
        return fail(ErrorKind::infra, "every host dropped out with " + std::to_string(left.size()) +
                                          " samples left; resume with `rig run --resume " +
                                          std::to_string(state.run_id) + "` once one is back");
    return {};
}

// A batch sample stored and counted.
Expected<void> store_sample(RunState& state, core::Sample sample) {
    RIG_TRY(hold_against_reference(state.db, state.run_id, state.cells, sample));
    RIG_TRY(state.db.add_sample(state.run_id, sample));
    ++state.summary.samples_run;
    if (sample.outcome != core::Outcome::ok)
        ++state.summary.samples_not_ok;
    return {};
}

// backend slurm: every sample of the plan as a task of a job array. Kernels are fetched
// and built here, on the coordinator; nodes only boot them.
Expected<void> run_as_batch(const std::vector<Planned>& plan, const std::vector<core::Cell>& cells,
                            RunState& state) {
    const core::Scenario& scenario = state.scenario;
    fs::path shared =
        state.settings.shared.empty() ? state.settings.results_dir : state.settings.shared;
    fs::path run_dir = core::results_folder(shared, state.settings.db, core::Kept::runs) /
                       std::to_string(state.run_id);
    std::map<KernelKey, PreparedKernel> kernels;
    std::map<std::string, int> position;
    for (size_t i = 0; i < cells.size(); ++i)
        position[cells[i].id] = static_cast<int>(i);
    std::vector<BatchSample> samples;
    bool warmups = false;
    for (const Planned& planned : plan) {
        if (planned.repetition < 0) {
            warmups = true; // a warmup warms a node, and each task may land on another one
            continue;
        }
        const core::Cell& cell = *planned.cell;
        if (!kernels.count(kernel_key(cell))) {
            auto prepared = state.kernels.prepare(scenario, cell, state.progress);
            if (!prepared && prepared.error().kind == ErrorKind::interrupted)
                return {};
            PreparedKernel kernel = RIG_TRY(std::move(prepared));
            if (!kernel.build_failure)
                std::tie(kernel.artifact.boot_image, kernel.base_initrd) = RIG_TRY(share_kernel(
                    kernel.artifact.id, kernel.artifact.boot_image, kernel.base_initrd, shared));
            kernels[kernel_key(cell)] = std::move(kernel);
        }
        const PreparedKernel& kernel = kernels.at(kernel_key(cell));
        // A kernel that did not build: its samples are stored here, no job boots them.
        if (kernel.build_failure) {
            RIG_TRY(store_sample(
                state, kernel_build_failed(cell, planned.repetition, *kernel.build_failure)));
            continue;
        }
        BatchSample sample;
        // Stable across resumes: the cells of a run's stored scenario keep their order.
        sample.index = position.at(cell.id) * scenario.repeat + planned.repetition;
        sample.label = sample_label(scenario, planned);
        SampleJob& job = sample.job;
        job.cell = sample_record(scenario, cell);
        job.repetition = planned.repetition;
        job.kernel_id = kernel.artifact.id;
        job.boot_image = kernel.artifact.boot_image;
        job.base_initrd = kernel.base_initrd;
        job.dir = run_dir / cell.id / std::to_string(planned.repetition);
        samples.push_back(std::move(sample));
    }
    if (warmups)
        state.progress.note("warmup rounds are skipped on backend slurm: each sample may run on "
                            "another node");
    BatchSettings settings;
    settings.jobs_dir = run_dir / "jobs";
    settings.program = state.settings.program;
    settings.cwd = fs::current_path();
    auto run = RIG_TRY(state.db.run(state.run_id));
    settings.job_name = batch_job_name(state.settings.db, run ? run->started_at : "",
                                       "run" + std::to_string(state.run_id));
    settings.options = job_options(scenario);
    settings.cluster = state.settings.cluster;
    settings.poll = state.settings.batch_poll;
    settings.clock = state.settings.clock;
    BatchEvents events;
    events.finished = [&](const core::Sample& sample) { return store_sample(state, sample); };
    events.note = [&](const std::string& text) { state.progress.note(text); };
    events.counts = [&](size_t queued, size_t running, size_t done) {
        state.progress.batch("slurm", queued, running, done);
    };
    return run_batch(scenario, std::move(samples), settings, state.interrupted, events);
}

} // namespace

Expected<RunSummary> run_scenario(const core::Scenario& scenario, store::Database& db,
                                  vm::Hypervisor& hypervisor, const RunSettings& settings,
                                  int64_t run_id, const std::atomic<bool>& interrupted,
                                  std::ostream& out) {
    return run_scenario(scenario, db, std::vector<Host>{{hypervisor.name(), &hypervisor}}, settings,
                        run_id, interrupted, out);
}

// The run's owner lock (store::Database::own_run); another rig that runs it is an error.
Expected<util::FileLock> own_run(store::Database& db, int64_t run_id) {
    auto owner = RIG_TRY(db.own_run(run_id));
    if (!owner)
        return fail(ErrorKind::usage, "run " + std::to_string(run_id) +
                                          " is running in another rig; wait for it, or stop it "
                                          "and `rig run --resume " +
                                          std::to_string(run_id) + "`");
    return std::move(*owner);
}

// The run's row, for a new run: the scenario as given, this host, and how it was started.
store::RunInfo run_info(const core::Scenario& given, const host::Facts& facts,
                        const RunSettings& settings) {
    store::RunInfo info;
    info.scenario_name = given.name;
    info.scenario_file = given.file;
    info.scenario_text = given.text;
    info.scenario_hash = util::sha256_hex(given.text);
    info.host_facts = facts.to_json();
    info.rig_version = RIG_VERSION;
    info.started_at = util::utc_text(settings.clock->wall_now());
    info.backend = settings.backend;
    info.uris = settings.uris;
    info.jobs = settings.jobs;
    return info;
}

// Every sample still missing, round by round; a fresh run's warmup rounds first.
std::vector<Planned> plan_samples(const core::Scenario& scenario,
                                  const std::vector<core::Cell>& cells,
                                  const store::SampleKeys& finished) {
    std::vector<Planned> plan;
    bool resuming = !finished.empty();
    for (int round = resuming ? 0 : -scenario.warmup; round < scenario.repeat; ++round)
        for (const core::Cell& cell : cells)
            if (round < 0 || !finished.count({cell.id, round}))
                plan.push_back({&cell, round});
    return plan;
}

// "run 3: quickstart, 8 cells x 3 repeats, accel tcg, backend qemu, ..."
std::string run_header(int64_t run_id, const core::Scenario& scenario, size_t cells,
                       size_t finished, std::string_view accel, const std::string& backend,
                       const std::vector<Host>& hosts, int jobs, const std::vector<Slot>& slots) {
    std::ostringstream out;
    out << "run " << run_id << ": " << scenario.name << ", " << cells << " cells x "
        << scenario.repeat << " repeats";
    if (finished == 0 && scenario.warmup > 0)
        out << " + " << scenario.warmup << " warmup rounds";
    if (finished > 0)
        out << ", resuming: " << finished << " samples already done";
    out << ", accel " << accel << ", backend " << backend;
    if (hosts.size() > 1) {
        out << " on " << hosts.size() << " hosts:";
        for (const Host& host : hosts)
            out << " " << host.name;
    }
    if (jobs > 1) {
        std::vector<core::CpuSet> sets;
        for (const Slot& slot : slots)
            sets.push_back(slot.cpus);
        out << ", " << jobs << " guests at once per host on CPUs " << core::cpu_sets_text(sets);
    }
    return out.str();
}

// A run's cells whole: frozen from the scenario for a new run, read back for a resumed one
// (a run stored before cells were, by freezing its stored scenario's cells now).
Expected<std::vector<core::CellRecord>> cells_of_run(const core::Scenario& scenario,
                                                     store::Database& db, int64_t run_id) {
    if (run_id != 0)
        if (auto stored = RIG_TRY(db.cell_records(run_id)))
            return std::move(*stored);
    return freeze(scenario, RIG_TRY(core::expand(scenario)));
}

Expected<RunSummary> run_scenario(const core::Scenario& given, store::Database& db,
                                  const std::vector<Host>& hosts, const RunSettings& settings,
                                  int64_t run_id, const std::atomic<bool>& interrupted,
                                  std::ostream& out) {
    if (hosts.empty() && !settings.batch)
        return fail(ErrorKind::usage, "no host to run samples on");
    // Held as long as this rig runs the run: readers see it running only while it does.
    std::optional<util::FileLock> owner;
    if (run_id != 0)
        owner.emplace(RIG_TRY(own_run(db, run_id)));
    std::vector<core::CellRecord> records = RIG_TRY(cells_of_run(given, db, run_id));
    std::vector<core::Cell> stored_cells;
    for (const core::CellRecord& record : records)
        stored_cells.push_back(record.cell);
    // A batch job's node looks for its own (run/worker.cpp): they need not be here.
    if (!settings.batch)
        RIG_TRY(find_programs(stored_cells, hosts));
    int jobs = settings.jobs > 0 ? settings.jobs : given.jobs;
    std::vector<Slot> slots;
    if (!settings.batch)
        slots = RIG_TRY(make_slots(hosts, given, jobs, settings.jobs == 0));
    host::Facts facts = settings.probe->facts();
    // A batch job's node probes and chooses for itself (run/worker.cpp). The libvirt
    // backend follows this local probe: right for qemu:///system. A remote host
    // (qemu+ssh://) is not probed, and libvirt's capabilities would offer a kvm domain
    // type on /dev/kvm alone, which is what the probe distrusts: it gets the local choice,
    // so a scenario for remote hosts unlike this one names its accel.
    core::Accelerator accel = core::Accelerator::tcg;
    guest::GuestRoot root;
    if (!settings.batch) {
        facts.accel = accel = RIG_TRY(settings.probe->accel(given.guest.accel, settings.cache_dir));
        root = RIG_TRY(guest::prepare_guest_root(settings.cache_dir));
    }

    RunSummary summary;
    if (run_id == 0) {
        run_id = RIG_TRY(db.begin_run(run_info(given, facts, settings), &owner));
    }
    summary.run_id = run_id;
    RIG_TRY(db.add_cells(run_id, records));
    fs::path run_dir = core::results_folder(settings.results_dir, settings.db, core::Kept::runs) /
                       std::to_string(run_id);
    // From here on the run is what its stored cells say, whatever the file says now.
    Thawed thawed = RIG_TRY(thaw(given, records, run_dir / "inputs"));
    const core::Scenario& scenario = thawed.scenario;
    const std::vector<core::Cell>& cells = thawed.cells;
    store::SampleKeys finished = RIG_TRY(db.finished_samples(run_id));

    std::vector<Planned> plan = plan_samples(scenario, cells, finished);
    summary.samples_skipped = finished.size();
    out << run_header(run_id, scenario, cells.size(), finished.size(),
                      settings.batch ? "per node" : core::to_string(accel),
                      settings.batch ? std::string("slurm") : hosts.front().hypervisor->name(),
                      hosts, settings.batch ? 1 : jobs, slots)
        << "\n";

    size_t stored_samples = static_cast<size_t>(std::count_if(
        plan.begin(), plan.end(), [](const Planned& p) { return p.repetition >= 0; }));
    Progress progress(out, settings.tty, settings.batch ? stored_samples : plan.size(),
                      *settings.clock);
    std::unique_ptr<KernelProvider> local_kernels;
    if (!settings.kernels)
        local_kernels = make_kernel_provider(settings.cache_dir, settings.tty, db, interrupted);
    KernelProvider& kernels = settings.kernels ? *settings.kernels : *local_kernels;
    RunState state{scenario, db,          settings, run_id,  accel,   run_dir,
                   root,     interrupted, progress, summary, kernels, cells};
    if (settings.batch)
        RIG_TRY(run_as_batch(plan, cells, state));
    else if (slots.size() > 1)
        RIG_TRY(run_on_slots(plan, hosts, slots, state));
    else
        RIG_TRY(run_on_one_host(plan, *hosts.front().hypervisor, state));
    summary.interrupted = interrupted;
    RIG_TRY(db.finish_run(run_id,
                          interrupted ? core::RunStatus::interrupted : core::RunStatus::finished));
    return summary;
}

} // namespace rig::run
