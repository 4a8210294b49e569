// SPDX-License-Identifier: MIT
// Running one sample.
#include "run/sample.hpp"

#include "core/classify.hpp"
#include "core/evidence.hpp"
#include "core/fs.hpp"
#include "guest/fuse.hpp"
#include "guest/initramfs.hpp"
#include "guest/job.hpp"
#include "guest/protocol.hpp"
#include "proc/cpu.hpp"
#include "run/guest_output.hpp"
#include "run/protocol_metrics.hpp"
#include "util/file.hpp"
#include "util/follow.hpp"
#include "util/strings.hpp"
#include "vm/qemu.hpp"
#include "vm/virtiofsd_log.hpp"
#include "workload/generate.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

namespace rig::run {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string utc_now() {
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&now, &utc); // samples of --jobs start from several threads
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

std::string whole_seconds(std::chrono::milliseconds duration) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) +
           " s";
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

// CPU figures at one instant, so that the workload window is end minus start.
struct CpuMark {
    vm::CpuTimes vm;
    proc::HostCpu host;
    Clock::time_point at;
};

// The host's figure is over the guest's own CPU set when it has one: under --jobs the
// other guests' work is not this sample's.
CpuMark mark(vm::Vm& guest, const core::CpuSet& cpus) {
    return {guest.cpu_times(), proc::host_cpu(cpus).value_or(proc::HostCpu{}), Clock::now()};
}

std::string workload_script(const std::string& command) {
    return "# rig workload\nset -e\n" + command;
}

// Where the host counts a sample's requests: QEMU's 9p trace, and virtiofsd's log of a
// virtiofs work share run with log_requests.
struct CountSources {
    fs::path trace;
    fs::path virtiofsd_log;
};

// Appends one source's counts; a source that is missing or incomplete adds nothing.
void add_counts(core::Sample& sample, const Expected<vm::ProtocolCounts>& counts,
                const std::vector<std::string>& phases, const CountNames& names,
                std::string& note) {
    if (!counts) {
        note += counts.error().message + "\n";
        return;
    }
    auto metrics = protocol_metrics(*counts, phases, names);
    if (metrics.empty())
        note += names.family + " counts: " + std::to_string(counts->marks) +
                " marks do not match the workload's phases; no counts\n";
    sample.metrics.insert(sample.metrics.end(), metrics.begin(), metrics.end());
}

// The metrics rig measures itself: each phase's time, and the requests counted by the
// host (the trace and the log are read, then removed: a long compile's run to tens of
// megabytes).
void add_host_metrics(core::Sample& sample, const guest::AgentReport& report,
                      const CountSources& sources, std::string& note) {
    // These names are the host's alone, as "guest." is the agent's: a workload cannot
    // forge them.
    std::erase_if(sample.metrics, [](const core::Metric& metric) {
        return util::starts_with(metric.name, "9p.") || util::starts_with(metric.name, "virtiofs.");
    });
    std::vector<std::string> phases;
    for (const guest::PhaseRecord& phase : report.phases) {
        sample.metrics.push_back({phase.name + "/seconds", phase.seconds(), "s"});
        phases.push_back(phase.name);
    }
    if (!sources.trace.empty() && report.end_ns)
        add_counts(sample, vm::read_protocol_trace(sources.trace, guest::k_mark_tag), phases,
                   ninep_count_names(), note);
    if (!sources.virtiofsd_log.empty() && report.end_ns)
        add_counts(sample, vm::read_virtiofsd_log(sources.virtiofsd_log, guest::k_work_tag), phases,
                   virtiofs_count_names(), note);
    std::error_code ec;
    if (!sources.trace.empty()) {
        fs::remove(sources.trace, ec);
        fs::remove(sources.trace.string() + ".events", ec);
    }
    // Kept when virtiofsd may be why the sample failed: it is that sample's evidence.
    if (!sources.virtiofsd_log.empty() && sample.outcome != core::Outcome::infra_error)
        fs::remove(sources.virtiofsd_log, ec);
}

// The evidence that explains an outcome: the setup error, the end of the console, or
// the end of the workload's output.
std::string evidence_for(core::Outcome outcome, const guest::AgentReport& report,
                         const std::string& console_tail, const std::string& note) {
    std::string evidence = note;
    auto tail_of = [](const std::string& text, size_t bytes) {
        return text.size() > bytes ? text.substr(text.size() - bytes) : text;
    };
    if (report.setup_error)
        evidence += "agent setup failed: " + *report.setup_error + "\n";
    switch (outcome) {
    case core::Outcome::workload_failed:
    case core::Outcome::errors:
        if (!report.tail.empty())
            return evidence + "workload output (tail):\n" + tail_of(report.tail, 4096);
        return evidence + "console (tail):\n" + tail_of(console_tail, 4096);
    case core::Outcome::ok:
        return evidence;
    default:
        return evidence + "console (tail):\n" + tail_of(console_tail, 4096);
    }
}

// The lowest free space seen on a sample's filesystem. A disk that fills while the guest
// runs fails the guest's writes and QEMU's logs, and a compile that then fails (and
// deletes its output) would leave no trace of why; so it is looked at on every poll.
class SpaceWatch final {
public:
    explicit SpaceWatch(fs::path dir) : m_dir(std::move(dir)) {}

    void look() {
        if (auto free = util::available_bytes(m_dir); free && (!m_lowest || *free < *m_lowest))
            m_lowest = *free;
    }
    bool full() const { return m_lowest && *m_lowest < k_min_free_bytes; }
    std::string reason() const {
        return "the host's folder " + m_dir.string() + " ran out of space during the sample (" +
               std::to_string(m_lowest.value_or(0) >> 10) + " KiB free at the lowest)";
    }

private:
    fs::path m_dir;
    std::optional<uint64_t> m_lowest;
};

// The sample as run_sample returns it. Once its folder ran out of space, the reason comes
// first in its evidence, and its share and initramfs copy (rebuilt by any rerun) are
// removed so that its record still fits in the database beside them.
SampleRun settle(core::Sample sample, const SpaceWatch& space, const fs::path& dir) {
    if (!space.full())
        return {std::move(sample), std::nullopt};
    std::string reason = space.reason();
    sample.evidence = reason + "\n" + sample.evidence;
    std::error_code ec;
    fs::remove_all(dir / "share", ec);
    fs::remove(dir / "initrd.cpio", ec);
    return {std::move(sample), reason};
}

// What QEMU and virtiofsd said, for an infra-error's evidence: why a guest never ran.
std::string helper_logs(const fs::path& dir) {
    std::string out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.path().extension() != ".log" || entry.path().filename() == "console.log")
            continue;
        util::FileFollower log(entry.path());
        std::string text = log.read_new(1 << 20);
        if (text.empty())
            continue;
        if (text.size() > 2048)
            text = text.substr(text.size() - 2048);
        out += entry.path().filename().string() + " (tail):\n" + text + "\n";
    }
    return out;
}

} // namespace

std::string guest_cmdline() {
    // console_msg_format=syslog prefixes each console line with its printk level. The
    // console prints warnings and worse during the boot (loglevel=5), which is every line
    // rig counts (core::classify_kernel_line): the boot's info and notice lines at the
    // UART's pace cost about 0.15 s a boot under TCG. The agent raises the level for the
    // workload; a failed workload or setup sends the whole log on the result channel
    // (kernel.log). A kernel without pvpanic replays the whole log onto the console after
    // a panic (panic_print=0x20; GuestOutput skips what it saw already). no_timer_check: under
    // TCG on a loaded host the boot-time IO-APIC timer check can fail and panic the guest
    // ("IO-APIC + timer doesn't work!"), which says nothing about filesystems.
    return "console=ttyS0 console_msg_format=syslog loglevel=5 panic_print=0x20 no_timer_check "
           "panic=-1 rdinit=/init";
}

namespace {

// Files written just now are seconds ahead of a guest whose clock started from the
// RTC's whole seconds: make then warns of clock skew and may rebuild what it built.
// A fixed instant in the past also makes every sample's tree the same.
Expected<void> date_back(const fs::path& share) {
    constexpr auto k_epoch = std::chrono::seconds(1577836800); // 2020-01-01T00:00:00Z
    auto when = fs::file_time_type::clock::from_sys(std::chrono::system_clock::time_point(k_epoch));
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(share, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_symlink())
            fs::last_write_time(it->path(), when, ec);
        if (ec)
            return fail(ErrorKind::infra,
                        "cannot date " + it->path().string() + ": " + ec.message());
    }
    return {};
}

Expected<void> fill_share(const core::Workload& workload, const fs::path& share) {
    std::error_code ec;
    switch (workload.kind) {
    case core::WorkloadKind::generate:
        return workload::write_generated_project(share, workload.generate);
    case core::WorkloadKind::tree:
        fs::copy(workload.tree, share,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
        if (ec)
            return fail(ErrorKind::infra, "cannot copy " + workload.tree + ": " + ec.message());
        return {};
    case core::WorkloadKind::command:
    case core::WorkloadKind::module: // the module travels in the job archive
        return {};
    }
    return {};
}

} // namespace

Expected<void> make_scratch_disk(const fs::path& file, uint64_t bytes) {
    std::error_code ec;
    fs::remove(file, ec);
    { std::ofstream create(file, std::ios::binary | std::ios::trunc); }
    // A hole of the whole size: nothing is written, so a 1G disk costs no host space
    // until the guest writes it, and a fresh file per sample reads as zeros.
    fs::resize_file(file, bytes, ec);
    if (ec)
        return fail(ErrorKind::infra,
                    "cannot make the scratch disk " + file.string() + ": " + ec.message());
    return {};
}

Expected<void> prepare_share(const core::Workload& workload, const fs::path& share) {
    std::error_code ec;
    fs::remove_all(share, ec);
    fs::create_directories(share, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + share.string() + ": " + ec.message());
    RIG_TRY(fill_share(workload, share));
    return date_back(share);
}

namespace {

// The sample's identity and the mount rig asks for, before anything runs.
core::Sample new_sample(const SampleContext& context) {
    core::Sample sample;
    sample.cell_id = context.cell.id;
    sample.repetition = context.repetition;
    sample.accel = core::to_string(context.accel);
    sample.cpus = core::cpu_list_text(context.host_cpus);
    sample.kernel_artifact = context.kernel.id;
    sample.started_at = utc_now();
    sample.mount_requested = core::mount_requested(context.cell);
    return sample;
}

// What the guest agent is told to run, in the sample's own initramfs.
Expected<guest::Job> make_job(const SampleContext& context) {
    const core::Scenario& scenario = context.scenario;
    guest::Job job;
    job.run_label = context.cell.id + "-" + std::to_string(context.repetition);
    job.fs = &context.cell.fs();
    job.work_options = core::work_mount_options(context.cell);
    job.workload_timeout =
        std::chrono::duration_cast<std::chrono::seconds>(scenario.timeouts.workload) +
        std::chrono::seconds(5);
    job.workload_script = workload_script(scenario.workload.command);
    for (const core::WorkloadPhase& step : scenario.workload.phases)
        job.phase_scripts.emplace_back(step.name, workload_script(step.command));
    job.mark_phases = scenario.guest.count_9p;
    job.scratch = scenario.guest.scratch_bytes != 0;
    if (context.module) {
        job.module = context.module->ko;
        job.module_params = scenario.workload.module_params;
    }
    // The one guest daemon rig ships; another would be found and handed over here.
    if (job.fs->daemon == core::Daemon::guest_fuse) {
        job.fuse_daemon = RIG_TRY(guest::find_fuse_daemon());
        job.fuse_args = core::daemon_arguments(context.cell);
    }
    return job;
}

Expected<fs::path> write_initrd(const SampleContext& context, const guest::Job& job) {
    std::string job_cpio = RIG_TRY(guest::job_archive(job));
    fs::path initrd = context.dir / "initrd.cpio";
    RIG_TRY(guest::write_sample_initrd(context.base_initrd, job_cpio, initrd));
    return initrd;
}

// The guest to boot, and where the host will count its requests.
struct Launch {
    vm::GuestSpec spec;
    CountSources counted;
};

Launch launch_for(const SampleContext& context, const guest::Job& job, const fs::path& initrd,
                  const fs::path& share) {
    const core::Scenario& scenario = context.scenario;
    Launch launch;
    vm::GuestSpec& spec = launch.spec;
    spec.name = "rig-" + job.run_label;
    spec.kernel = context.kernel.boot_image;
    spec.initrd = initrd;
    spec.cmdline = guest_cmdline();
    // A module's oops would leave a guest that runs on, tainted, until the timeout: with
    // oops=panic it ends at once through pvpanic, as the kernel-panic outcome.
    if (context.module)
        spec.cmdline += " oops=panic";
    spec.memory_mib = scenario.guest.memory_mib;
    spec.cpus = scenario.guest.cpus;
    spec.host_cpus = context.host_cpus;
    spec.accel = context.accel;
    spec.console_log = context.dir / "console.log";
    spec.channel_log = context.dir / "channel.log";
    spec.runtime_dir = context.dir;
    spec.shares.push_back({vm::ShareKind::v9p, guest::k_root_tag, "/", true, "none", ""});
    vm::Share work;
    work.tag = guest::k_work_tag;
    work.path = share;
    const core::Filesystem& fs = context.cell.fs();
    work.kind = fs.share;
    // vm::Share's daemon fields are virtiofsd's: the one host daemon the backends start.
    if (fs.daemon == core::Daemon::host)
        work.virtiofs_cache = core::cache_or_default(context.cell);
    if (fs.counter == core::Counter::virtiofsd_log) {
        work.log_requests = scenario.guest.count_9p && context.hypervisor.logs_virtiofs_requests();
        if (work.log_requests)
            launch.counted.virtiofsd_log = vm::virtiofsd_log(context.dir, work.tag);
    }
    spec.shares.push_back(work);
    if (scenario.guest.count_9p) {
        spec.protocol_trace = context.dir / "9p.trace";
        launch.counted.trace = spec.protocol_trace;
        fs::path marks = context.dir / "marks";
        std::error_code ec;
        fs::create_directories(marks, ec);
        spec.shares.push_back({vm::ShareKind::v9p, guest::k_mark_tag, marks, true, "none", ""});
    }
    return launch;
}

// Why rig stops watching a guest. The checks run in this order, so when several hold at
// one poll the first names the stop; core::classify then ranks the facts a stop records
// (a panic seen on the console wins over the timeout it caused).
enum class Stop {
    vm_exited,        // the guest powered off, or QEMU ended
    interrupted,      // Ctrl-C or SIGTERM reached rig
    helper_failed,    // virtiofsd died before the agent was done: infra error
    panicked,         // "Kernel panic" printed, then quiet for pacing.panic_quiet
    boot_timeout,     // no workload start within timeouts.boot
    workload_timeout, // no workload end within timeouts.workload of its start
    silence,          // nothing on console or channel for timeouts.silence
    poweroff_overdue, // everything reported, but the guest will not power off
    out_of_space,     // the sample's folder filled: nothing after can be trusted
};

// One booted guest, watched until a Stop: its console and channel read as they grow,
// its milestones marked with CPU figures.
class Watch final {
public:
    Watch(const SampleContext& context, const Pacing& pacing, const vm::GuestSpec& spec,
          vm::Vm& guest, SpaceWatch& space, Clock::time_point launched)
        : m_context(context), m_pacing(pacing), m_guest(guest), m_space(space),
          m_console(spec.console_log), m_channel(spec.channel_log),
          m_output(context.module ? WorkloadOutput::kernel_log : WorkloadOutput::text),
          m_launched(launched), m_last_output(launched) {}

    // Polls the guest until it has to stop, and records why in facts and note.
    void until_stop(core::SampleFacts& facts, std::string& note) {
        while (true) {
            take_in(1 << 20);
            if (auto stop = stop_reason(facts)) {
                record(*stop, facts, note);
                return;
            }
            if (m_context.on_tick)
                m_context.on_tick();
            std::this_thread::sleep_for(m_pacing.poll);
        }
    }

    // What the guest wrote after the last poll still counts.
    void take_rest() { take_in(8 << 20); }

    const GuestOutput& output() const { return m_output; }
    Clock::time_point launched() const { return m_launched; }
    const std::optional<CpuMark>& start_mark() const { return m_start_mark; }
    const std::optional<CpuMark>& end_mark() const { return m_end_mark; }

private:
    void phase(const std::string& name) const {
        if (m_context.on_phase)
            m_context.on_phase(name);
    }

    void take_in(size_t limit) {
        std::string console_bytes = m_console.read_new(limit);
        std::string channel_bytes = m_channel.read_new(limit);
        if (!console_bytes.empty() || !channel_bytes.empty())
            m_last_output = Clock::now();
        m_output.add_console(console_bytes);
        ChannelNews news = m_output.add_channel(channel_bytes);
        if (news.started) {
            m_start_mark = mark(m_guest, m_context.host_cpus);
            phase("running workload");
        }
        if (news.ended) {
            m_end_mark = mark(m_guest, m_context.host_cpus);
            phase("collecting");
        }
        if (news.done)
            m_done_at = Clock::now();
    }

    // The one place that orders the stops (see Stop). The VM's exit status is a fact
    // whichever way the guest ended, so it is kept here.
    std::optional<Stop> stop_reason(core::SampleFacts& facts) {
        const guest::AgentReport& report = m_output.report();
        const core::Timeouts& timeouts = m_context.scenario.timeouts;
        Clock::time_point now = Clock::now();
        if ((facts.vm_exit = m_guest.poll()))
            return Stop::vm_exited;
        if (m_context.interrupted)
            return Stop::interrupted;
        // virtiofsd leaves when the guest resets its device at poweroff; only a death
        // before the agent is done is a failure.
        if (!report.done && (m_helper_failure = m_guest.helper_failure()))
            return Stop::helper_failed;
        if (m_output.panic_on_console() && now - m_last_output > m_pacing.panic_quiet)
            return Stop::panicked;
        // A setup failure powers the guest off by itself; only silence waits on it.
        if (!report.start_ns && !report.setup_error && now - m_launched > timeouts.boot)
            return Stop::boot_timeout;
        if (m_start_mark && !report.end_ns && now - m_start_mark->at > timeouts.workload)
            return Stop::workload_timeout;
        if (now - m_last_output > timeouts.silence)
            return Stop::silence;
        if (m_done_at && now - *m_done_at > m_pacing.poweroff_grace)
            return Stop::poweroff_overdue;
        m_space.look();
        if (m_space.full())
            return Stop::out_of_space;
        return std::nullopt;
    }

    void record(Stop stop, core::SampleFacts& facts, std::string& note) const {
        const core::Timeouts& timeouts = m_context.scenario.timeouts;
        switch (stop) {
        case Stop::interrupted:
            facts.interrupted = true;
            note = "rig was interrupted during this sample\n";
            return;
        case Stop::helper_failed:
            facts.helper_failed = true;
            note = m_helper_failure.value_or("") + "\n";
            return;
        case Stop::boot_timeout:
            facts.boot_timed_out = true;
            note = "no workload start within " + whole_seconds(timeouts.boot) + " of boot\n";
            return;
        case Stop::workload_timeout:
            facts.workload_timed_out = true;
            note = "the workload did not end within its timeout\n";
            return;
        case Stop::silence:
            facts.silent = true;
            note = "no output on console or result channel for " + whole_seconds(timeouts.silence) +
                   "\n";
            return;
        // The output (a panic), the exit status and the space watch say the rest.
        case Stop::vm_exited:
        case Stop::panicked:
        case Stop::poweroff_overdue:
        case Stop::out_of_space:
            return;
        }
    }

    const SampleContext& m_context;
    const Pacing& m_pacing;
    vm::Vm& m_guest;
    SpaceWatch& m_space;
    util::FileFollower m_console;
    util::FileFollower m_channel;
    GuestOutput m_output;
    Clock::time_point m_launched;
    Clock::time_point m_last_output;
    std::optional<CpuMark> m_start_mark;
    std::optional<CpuMark> m_end_mark;
    std::optional<Clock::time_point> m_done_at;
    std::optional<std::string> m_helper_failure;
};

// The workload window's host figures, from the CPU marks at its start and end.
void add_cpu_figures(core::Sample& sample, const Watch& watch) {
    if (!watch.start_mark() || !watch.end_mark())
        return;
    const CpuMark& start = *watch.start_mark();
    const CpuMark& end = *watch.end_mark();
    sample.wall_seconds = seconds_between(start.at, end.at);
    sample.qemu_cpu_seconds = end.vm.vm_seconds - start.vm.vm_seconds;
    sample.helper_cpu_seconds = end.vm.helper_seconds - start.vm.helper_seconds;
    sample.host_cpu_seconds = end.host.busy_seconds - start.host.busy_seconds;
    double total = end.host.total_seconds - start.host.total_seconds;
    sample.host_cpu_percent = total > 0 ? 100.0 * sample.host_cpu_seconds / total : 0;
}

// Everything before the boot: the share, the job's initramfs and the guest's description.
Expected<Launch> prepare_launch(const SampleContext& context, const fs::path& share) {
    if (context.on_phase)
        context.on_phase("preparing workload");
    RIG_TRY(prepare_share(context.scenario.workload, share));
    guest::Job job = RIG_TRY(make_job(context));
    fs::path initrd = RIG_TRY(write_initrd(context, job));
    Launch launch = launch_for(context, job, initrd, share);
    if (job.scratch) {
        launch.spec.scratch_disk = context.dir / "scratch.img";
        RIG_TRY(make_scratch_disk(launch.spec.scratch_disk, context.scenario.guest.scratch_bytes));
    }
    return launch;
}

// Watches a booted guest to its stop, then turns what it said into the sample.
void watch_guest(const SampleContext& context, const Pacing& pacing, const Launch& launch,
                 vm::Vm& guest, Clock::time_point launched, SpaceWatch& space,
                 core::Sample& sample) {
    core::SampleFacts facts;
    std::string note;
    Watch watch(context, pacing, launch.spec, guest, space, launched);
    watch.until_stop(facts, note);
    guest.destroy();
    watch.take_rest();
    Clock::time_point finished = Clock::now();

    const GuestOutput& output = watch.output();
    output.describe(context.cell.fs(), facts, sample);
    // Beside console.log, which has only warnings and worse up to a panic.
    if (!output.report().kernel_log.empty())
        (void)util::write_file_atomically(context.dir / "kernel.log", output.report().kernel_log,
                                          util::Sync::skip);
    space.look();
    facts.out_of_space = space.full();
    sample.outcome = core::classify(facts);
    add_host_metrics(sample, output.report(), launch.counted, note);
    sample.total_seconds = seconds_between(watch.launched(), finished);
    add_cpu_figures(sample, watch);
    if (sample.outcome == core::Outcome::infra_error)
        note += helper_logs(context.dir);
    note += output.channel_note();
    sample.evidence = evidence_for(sample.outcome, output.report(), output.console_tail(), note);
}

// A module that does not compile against the cell's kernel is data about the cell, like a
// failed compile in a guest: the compiler's lines are its evidence, and no guest boots.
SampleRun module_build_failed(const SampleContext& context, core::Sample sample) {
    sample.outcome = core::Outcome::build_failed;
    sample.evidence = "the module does not compile against kernel " + context.kernel.release +
                      ":\n" + context.module->error_lines + "\n";
    for (const std::string& line : util::split(context.module->error_lines, '\n'))
        if (!line.empty())
            sample.lines.push_back(
                {core::Severity::error, "build", line, core::signature_of(line)});
    sample.error_count = static_cast<int>(sample.lines.size());
    return {std::move(sample), std::nullopt};
}

} // namespace

SampleRun run_sample(const SampleContext& context, const Pacing& pacing) {
    core::Sample sample = new_sample(context);
    if (context.module && context.module->outcome == kernel::ModuleOutcome::build_failed)
        return module_build_failed(context, std::move(sample));
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
    auto launch = prepare_launch(context, share);
    if (!launch)
        return infra(launch.error().message);
    space.look();
    if (space.full())
        return infra("the guest was not booted");
    if (context.on_phase)
        context.on_phase("booting");
    Clock::time_point launched = Clock::now();
    auto started = context.hypervisor.start(launch->spec);
    if (!started)
        return infra(started.error().message);
    watch_guest(context, pacing, *launch, **started, launched, space, sample);
    fs::remove_all(share, ec);
    if (!launch->spec.scratch_disk.empty())
        fs::remove(launch->spec.scratch_disk, ec);
    return settle(std::move(sample), space, context.dir);
}

} // namespace rig::run
