// SPDX-License-Identifier: MIT
// Preparing a sample's guest: the share, the job archive and initramfs, the VM's spec.
#include "run/sample_launch.hpp"

#include "core/fs.hpp"
#include "core/profile.hpp"
#include "guest/fuse.hpp"
#include "guest/initramfs.hpp"
#include "guest/job.hpp"
#include "guest/protocol.hpp"
#include "host/tsc.hpp"
#include "run/reproducer.hpp"
#include "vm/qemu.hpp"
#include "vm/virtiofsd_log.hpp"
#include "workload/coherency.hpp"
#include "workload/generate.hpp"
#include "workload/readback.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

std::string workload_script(const std::string& command) {
    return "# rig workload\nset -e\n" + command;
}

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

Expected<void> fill_kind(const core::Workload& workload, const fs::path& share) {
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
    case core::WorkloadKind::readback:
        return workload::write_readback_files(share, workload.readback);
    case core::WorkloadKind::command:
    case core::WorkloadKind::module: // the module travels in the job archive
        return {};
    }
    return {};
}

Expected<void> fill_share(const core::Workload& workload, const fs::path& share) {
    RIG_TRY(fill_kind(workload, share));
    if (workload.coherency.enabled())
        RIG_TRY(workload::write_coherency_files(share, workload));
    return {};
}

// A read-only 9p share of the guest root: where it is on the host and in the guest.
struct RootShare {
    std::string tag;
    fs::path host_path;
    std::string guest_path;
};

// The guest root's shares (guest/root.hpp), then the scenario's host paths, in the order
// the agent mounts them.
std::vector<RootShare> root_shares(const SampleContext& context) {
    std::vector<RootShare> shares{{guest::k_usr_tag, context.root.usr, "/usr"},
                                  {guest::k_etc_tag, context.root.etc, "/etc"}};
    const std::vector<std::string>& paths = context.scenario.guest.host_paths;
    for (size_t i = 0; i < paths.size(); ++i)
        shares.push_back({guest::k_host_path_tag + std::to_string(i), paths[i], paths[i]});
    return shares;
}

// What the guest agent is told to run, in the sample's own initramfs.
Expected<guest::Job> make_job(const SampleContext& context) {
    const core::Scenario& scenario = context.scenario;
    guest::Job job;
    job.run_label = context.cell.id + "-" + std::to_string(context.repetition);
    job.fs = &context.cell.fs();
    job.machine = machine_for(context);
    job.work_options = core::work_mount_options(context.cell);
    job.workload_timeout =
        std::chrono::duration_cast<std::chrono::seconds>(scenario.timeouts.workload) +
        std::chrono::seconds(5);
    job.workload_script =
        workload_script(scenario.workload.kind == core::WorkloadKind::readback
                            ? workload::readback_command(scenario.workload.readback)
                            : scenario.workload.command);
    job.outputs = core::output_globs(scenario.workload);
    for (const core::WorkloadPhase& step : scenario.workload.phases)
        job.phase_scripts.emplace_back(step.name, workload_script(step.command));
    job.mark_phases = scenario.guest.count_9p;
    if (scenario.workload.coherency.enabled()) {
        job.coherency = workload::coherency_plan(scenario.workload);
        job.coherency_window = scenario.workload.coherency.window;
    }
    job.check_after = core::paused_phases(scenario.workload);
    job.scratch = scenario.guest.scratch_bytes != 0;
    job.profile_globs = core::profile_globs(scenario.guest.profile);
    if (context.module) {
        job.module = context.module->ko;
        job.module_params = scenario.workload.module_params;
    }
    // The one guest daemon rig ships; another would be found and handed over here.
    if (job.fs->daemon == core::Daemon::guest_fuse) {
        job.fuse_daemon = RIG_TRY(guest::find_fuse_daemon());
        job.fuse_args = core::daemon_arguments(context.cell);
    }
    for (const RootShare& share : root_shares(context))
        job.root_shares.emplace_back(share.tag, share.guest_path);
    job.root_links = context.root.links;
    return job;
}

Expected<fs::path> write_initrd(const SampleContext& context, const guest::Job& job) {
    std::string job_cpio = RIG_TRY(guest::job_archive(job));
    fs::path initrd = context.dir / "initrd.cpio";
    RIG_TRY(guest::write_sample_initrd(context.base_initrd, job_cpio, initrd));
    return initrd;
}

Launch launch_for(const SampleContext& context, const guest::Job& job, const fs::path& initrd,
                  const fs::path& share) {
    const core::Scenario& scenario = context.scenario;
    Launch launch;
    vm::GuestSpec& spec = launch.spec;
    spec.name = "rig-" + job.run_label;
    spec.kernel = context.kernel.boot_image;
    spec.initrd = initrd;
    spec.machine = job.machine;
    spec.cmdline = guest_cmdline(spec.machine, context.accel);
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
    for (const RootShare& root : root_shares(context))
        spec.shares.push_back({vm::ShareKind::v9p, root.tag, root.host_path, true, "none", ""});
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
    if (guest::wants_ack_share(job)) {
        launch.acks = context.dir / "acks";
        std::error_code ec;
        fs::create_directories(launch.acks, ec);
        spec.shares.push_back(
            {vm::ShareKind::v9p, guest::k_ack_tag, launch.acks, true, "none", ""});
    }
    return launch;
}

} // namespace

std::string guest_cmdline(core::Machine machine, core::Accelerator accel) {
    // console_msg_format=syslog prefixes each console line with its printk level. The
    // console prints warnings and worse during the boot (loglevel=5), which is every line
    // rig counts (core::classify_kernel_line): the boot's info and notice lines at the
    // UART's pace cost about 0.15 s a boot under TCG. The agent raises the level for the
    // workload; a failed workload or setup sends the whole log on the result channel
    // (kernel.log). A kernel without pvpanic replays the whole log onto the console after
    // a panic (panic_print=0x20; GuestOutput skips what it saw already). no_timer_check: under
    // TCG on a loaded host the boot-time IO-APIC timer check can fail and panic the guest
    // ("IO-APIC + timer doesn't work!"), which says nothing about filesystems.
    // cryptomgr.notests: the crypto algorithms' self-tests at boot took 0.23-0.4 s of a
    // Debian kernel's boot under TCG (initcall_debug: crypto_algapi_init), checking what no
    // filesystem under test uses (fscache and 9p do no crypto).
    std::string line = "console=ttyS0 console_msg_format=syslog loglevel=5 panic_print=0x20 "
                       "no_timer_check cryptomgr.notests panic=-1 rdinit=/init";
    if (machine != core::Machine::microvm)
        return line;
    // reboot=t: the agent's reboot -f ends the guest by a triple fault, which -no-reboot
    // turns into QEMU's exit, whatever microvm's ACPI offers for a reset.
    line += " reboot=t";
    // microvm has no HPET or ACPI PM timer. Under TCG its boot calibrates the TSC against
    // the PIT alone, which fails now and then on a loaded host and leaves the guest
    // without a working clock (it hangs); and the TSC sync check, which the vCPU threads
    // fail though they read one host counter, would leave jiffies as the clock. So the
    // guest is told the TSC's rate, which is the host's, and that it is reliable.
    if (accel == core::Accelerator::tcg)
        if (std::optional<uint64_t> khz = host::tsc_khz())
            line += " tsc_early_khz=" + std::to_string(*khz) + " tsc=reliable";
    return line;
}

namespace {

// Whether every kernel of the scenario is a Debian one, which boots microvm. The cells of a
// run are held against each other, and the machine moves the workload's times (under TCG
// microvm's guests read a TSC clock where q35's read an emulated HPET: the quickstart's
// compiles took 10-15 % less): so a run with a kernel that cannot boot microvm boots all
// of its kernels on q35.
bool all_kernels_debian(const core::Scenario& scenario) {
    return std::all_of(scenario.kernels.begin(), scenario.kernels.end(), [](const core::Kernel& k) {
        return k.source == core::KernelSource::debian;
    });
}

} // namespace

core::Machine machine_for(const SampleContext& context) {
    if (context.scenario.guest.machine == core::Machine::q35 ||
        !all_kernels_debian(context.scenario) || !context.hypervisor.boots_microvm() ||
        !guest::kernel_boots_microvm(context.kernel))
        return core::Machine::q35;
    if (context.accel == core::Accelerator::tcg && !host::tsc_khz())
        return core::Machine::q35;
    return core::Machine::microvm;
}

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
    // Emptied, not removed: it may be a mount point (run/share_mount.hpp).
    std::error_code ec;
    fs::create_directories(share, ec);
    for (auto it = fs::directory_iterator(share, ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
        fs::remove_all(it->path(), ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot empty " + share.string() + ": " + ec.message());
    RIG_TRY(fill_share(workload, share));
    return date_back(share);
}

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
    // The guest as a report's reproducer will boot it without rig.
    RIG_TRY(write_recipe(launch.spec, context.kernel.image, context.dir));
    return launch;
}

} // namespace rig::run
