// SPDX-License-Identifier: MIT
// Tests of run/sample through the FakeHypervisor: every outcome class, and every rule of
// precedence between boot timeout, silence, panic, workload timeout and infra error, on
// timeouts of milliseconds.
#include "fake_hypervisor.hpp"
#include "guest/job.hpp"
#include "host/tsc.hpp"
#include "proc/process.hpp"
#include "run/reproducer.hpp"
#include "run/sample.hpp"
#include "run/sample_launch.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"

#include <atomic>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace rig;
using rig::test::FakeHypervisor;
using rig::test::GuestScript;
using std::chrono::milliseconds;

namespace {

// Long enough never to fire in a test that waits on something else.
constexpr milliseconds k_never{10'000};

// A sample's surroundings with every timeout at k_never; each test shortens the one it is
// about. Polls every 2 ms, so a test takes tens of milliseconds.
struct Bench {
    test::TempDir dir;
    core::Scenario scenario;
    core::Cell cell;
    kernel::Artifact kernel;
    std::atomic<bool> interrupted{false};
    run::Pacing pacing{milliseconds(2), k_never, k_never};
    std::vector<std::string> phases;
    core::Sample last_sample;

    Bench() {
        scenario.workload.kind = core::WorkloadKind::command;
        scenario.workload.command = "true";
        scenario.timeouts = {k_never, k_never, k_never};
        scenario.guest.count_9p = false; // the fake guest writes no 9p trace
        cell.id = "0123456789ab";
        kernel.id = "fake";
        kernel.boot_image = dir.path() / "vmlinux";
        std::ofstream(dir.path() / "base.cpio");
    }

    run::SampleRun run(vm::Hypervisor& hypervisor) {
        run::SampleContext context{scenario,
                                   cell,
                                   0,
                                   kernel,
                                   dir.path() / "base.cpio",
                                   dir.path() / "sample",
                                   core::Accelerator::tcg,
                                   hypervisor,
                                   interrupted,
                                   [this](const std::string& phase) { phases.push_back(phase); },
                                   {}};
        return run::run_sample(context, pacing);
    }

    core::Sample run(GuestScript script) {
        FakeHypervisor hypervisor(std::move(script));
        return run(hypervisor).sample;
    }

    // What a sample whose guest did everything asked QEMU to boot, for its recipe.
    vm::GuestSpec booted_spec() {
        FakeHypervisor hypervisor(test::finished_guest(0));
        run(hypervisor);
        EXPECT_EQ(hypervisor.started().size(), 1u);
        return hypervisor.started().at(0);
    }
};

// The agent's hello, then a console line every 5 ms until `until`: a guest that is busy
// but never starts (or ends) its workload.
GuestScript chatter(milliseconds until) {
    GuestScript script;
    script.hello(milliseconds(0));
    for (milliseconds at{5}; at < until; at += milliseconds(5))
        script.console(at, "<6>still busy");
    return script;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(RunSample, FinishedWorkloadIsOk) {
    Bench bench;
    FakeHypervisor hypervisor(test::finished_guest(0));
    run::SampleRun ran = bench.run(hypervisor);
    const core::Sample& sample = ran.sample;
    EXPECT_EQ(sample.outcome, core::Outcome::ok);
    EXPECT_FALSE(ran.out_of_space);
    EXPECT_EQ(sample.exit_status, 0);
    EXPECT_DOUBLE_EQ(sample.guest_seconds, 0.02);
    EXPECT_GT(sample.wall_seconds, 0);
    EXPECT_GE(sample.total_seconds, 0.04);
    EXPECT_EQ(sample.evidence, "");
    EXPECT_EQ(bench.phases, (std::vector<std::string>{"preparing workload", "booting",
                                                      "running workload", "collecting"}));
    ASSERT_EQ(hypervisor.started().size(), 1u);
    const vm::GuestSpec& spec = hypervisor.started().front();
    EXPECT_EQ(spec.name, "rig-0123456789ab-0");
    EXPECT_EQ(spec.kernel, bench.kernel.boot_image);
    EXPECT_EQ(spec.cmdline, run::guest_cmdline(core::Machine::q35, core::Accelerator::tcg));
    // The fake backend boots q35 only, whatever the kernel.
    EXPECT_EQ(spec.machine, core::Machine::q35);
    EXPECT_EQ(hypervisor.destroyed(), 0); // it powered off by itself
}

namespace {

// Runs one sample whose kernel image is a file named `image_name`; returns the sample's
// folder, which holds its reproducer recipe.
std::filesystem::path sample_with_kernel(Bench& bench, const char* image_name) {
    bench.kernel.image = bench.dir.path() / image_name;
    std::ofstream(bench.kernel.image) << "kernel";
    FakeHypervisor hypervisor(test::finished_guest(0));
    bench.run(hypervisor);
    return bench.dir.path() / "sample";
}

} // namespace

// What a report packs for a maintainer (run/reproducer.hpp): the sample's guest as a
// script over the reproducer's own names, then a tarball of it that packs the same way
// each time.
// microvm ends by a triple fault; under TCG the guest is told the TSC's rate, which it
// cannot calibrate without HPET; under KVM its clock is kvm-clock and needs nothing.
TEST(RunSample, AMicrovmGuestIsToldHowToRebootAndItsClockUnderTcg) {
    const std::string q35 = run::guest_cmdline(core::Machine::q35, core::Accelerator::tcg);
    EXPECT_EQ(q35.find("reboot="), std::string::npos);
    EXPECT_EQ(q35.find("tsc"), std::string::npos);
    const std::string tcg = run::guest_cmdline(core::Machine::microvm, core::Accelerator::tcg);
    EXPECT_EQ(tcg.rfind(q35, 0), 0u) << tcg;
    EXPECT_NE(tcg.find(" reboot=t"), std::string::npos);
    if (std::optional<uint64_t> khz = host::tsc_khz())
        EXPECT_NE(tcg.find(" tsc_early_khz=" + std::to_string(*khz) + " tsc=reliable"),
                  std::string::npos)
            << tcg;
    const std::string kvm = run::guest_cmdline(core::Machine::microvm, core::Accelerator::kvm);
    EXPECT_NE(kvm.find(" reboot=t"), std::string::npos);
    EXPECT_EQ(kvm.find("tsc"), std::string::npos);
}

// A Debian kernel with virtio-mmio on a backend that boots microvm: the guest gets microvm,
// its command line and the module list with virtio's MMIO transport; a scenario that pins
// q35, or a kernel without virtio-mmio, gets q35.
TEST(RunSample, ADebianKernelBootsMicrovmWhereTheBackendDoes) {
    Bench bench;
    bench.kernel.package = "linux-image-6.1.0-57-amd64";
    bench.kernel.modules_dir = bench.dir.path() / "modules";
    std::filesystem::create_directories(bench.kernel.modules_dir);
    std::ofstream(bench.kernel.modules_dir / "modules.dep")
        << "kernel/drivers/virtio/virtio_mmio.ko:\n";
    auto boot = [&] {
        FakeHypervisor hypervisor(test::finished_guest(0));
        hypervisor.set_boots_microvm(true);
        bench.last_sample = bench.run(hypervisor).sample;
        EXPECT_EQ(bench.last_sample.outcome, core::Outcome::ok);
        return hypervisor.started().at(0);
    };
    auto initrd = [&] { return util::read_file(bench.dir.path() / "sample" / "initrd.cpio"); };
    vm::GuestSpec spec = boot();
    EXPECT_EQ(spec.machine, core::Machine::microvm);
    EXPECT_EQ(bench.last_sample.machine, "microvm");
    EXPECT_EQ(spec.cmdline, run::guest_cmdline(core::Machine::microvm, core::Accelerator::tcg));
    EXPECT_TRUE(has(initrd(), "MODULES=/etc/rig/modules-9p-microvm\n"));

    bench.scenario.guest.machine = core::Machine::q35;
    spec = boot();
    EXPECT_EQ(spec.machine, core::Machine::q35);
    EXPECT_EQ(spec.cmdline, run::guest_cmdline(core::Machine::q35, core::Accelerator::tcg));
    EXPECT_TRUE(has(initrd(), "MODULES=/etc/rig/modules-9p\n"));

    bench.scenario.guest.machine.reset();
    // A scenario with a git kernel besides: all of its cells on q35, to compare them.
    bench.scenario.kernels.resize(2);
    bench.scenario.kernels[1].source = core::KernelSource::git;
    EXPECT_EQ(boot().machine, core::Machine::q35);
    bench.scenario.kernels.resize(1);
    EXPECT_EQ(boot().machine, core::Machine::microvm);

    std::ofstream(bench.kernel.modules_dir / "modules.dep")
        << "kernel/drivers/virtio/virtio_pci.ko:\n";
    EXPECT_EQ(boot().machine, core::Machine::q35);
}

TEST(RunSample, KeepsARecipeThatATarballBootsWithoutRig) {
    Bench bench;
    const std::filesystem::path sample = sample_with_kernel(bench, "bzImage");
    const std::string script = util::read_file(sample / run::k_recipe_script);
    EXPECT_TRUE(has(script, "cp -a work.orig work\n")) << script;
    EXPECT_TRUE(has(script, "exec qemu-system-x86_64")) << script;
    EXPECT_TRUE(has(script, "-kernel \\\n    bzImage \\\n    -initrd \\\n    initrd.cpio"))
        << script;
    EXPECT_TRUE(has(script, "path=work,")) << script;
    EXPECT_TRUE(has(script, "'console=ttyS0 console_msg_format=syslog")) << script;
    EXPECT_FALSE(has(script, "-trace")) << script;
    EXPECT_FALSE(has(script, bench.dir.path().string())) << script;

    const std::filesystem::path out = bench.dir.path() / "outbox";
    std::filesystem::create_directories(out);
    run::ReproducerParts parts{sample, bench.scenario.workload, "CONFIG_9P_FS=y\n", "A test.\n"};
    ASSERT_TRUE(run::write_reproducer(parts, out / "x.repro.tar.gz"));
    auto listed = proc::run(
        {"tar", "--list", "--verbose", "--gzip", "--file", (out / "x.repro.tar.gz").string()});
    ASSERT_TRUE(listed);
    for (const char* entry : {"x.repro/run.sh", "x.repro/bzImage", "x.repro/initrd.cpio",
                              "x.repro/config", "x.repro/README", "x.repro/work.orig/"})
        EXPECT_TRUE(has(listed->out, entry)) << entry << "\n" << listed->out;
    EXPECT_TRUE(has(listed->out, "-rwxr-xr-x 0/0")) << listed->out; // run.sh, root's
    const std::string first = util::read_file(out / "x.repro.tar.gz");
    ASSERT_TRUE(run::write_reproducer(parts, out / "x.repro.tar.gz"));
    EXPECT_EQ(util::read_file(out / "x.repro.tar.gz"), first);
    // Nothing of its making is left beside it.
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(out), {}), 1);
    // A sample without a recipe (one from before rig wrote them) says so.
    auto none = run::write_reproducer({bench.dir.path(), {}, "", ""}, out / "y.tar.gz");
    ASSERT_FALSE(none);
    EXPECT_TRUE(has(none.error().message, "keeps no reproducer recipe")) << none.error().message;
}

// A git kernel built for PVH has no bzImage: its reproducer boots the vmlinux by that name.
TEST(RunSample, AVmlinuxKernelKeepsItsNameInTheRecipe) {
    Bench bench;
    const std::filesystem::path sample = sample_with_kernel(bench, "vmlinux");
    EXPECT_TRUE(has(util::read_file(sample / run::k_recipe_script),
                    "-kernel \\\n    vmlinux \\\n    -initrd"));
    EXPECT_TRUE(has(util::read_file(sample / run::k_recipe_files),
                    "vmlinux\t" + bench.kernel.image.string()));
}

// A virtiofs cell's reproducer starts virtiofsd in the background and waits for its
// socket before QEMU starts; the script is one the shell parses.
TEST(RunSample, AVirtiofsRecipeStartsItsDaemonInTheBackgroundFirst) {
    Bench bench;
    vm::GuestSpec spec = bench.booted_spec();
    for (vm::Share& share : spec.shares)
        if (share.tag == "work")
            share.kind = vm::ShareKind::virtiofs;
    const std::string script = run::reproducer_script(spec, "bzImage");
    const size_t daemon = script.find("virtiofsd");
    const size_t background = script.find(" &\ntrap 'kill $! 2>/dev/null || true' EXIT\n");
    const size_t qemu = script.find("qemu-system-x86_64");
    ASSERT_NE(daemon, std::string::npos) << script;
    ASSERT_NE(background, std::string::npos) << script;
    EXPECT_LT(daemon, background);
    EXPECT_LT(background, qemu) << script;
    // The daemon's last word and the & share a line: else it would run in the foreground.
    EXPECT_EQ(script.substr(0, background).find('\n', script.rfind("    ", background)),
              std::string::npos)
        << script;
    EXPECT_TRUE(has(script, "vhost-user-fs-pci,chardev=")) << script;
    // virtiofsd resolves its source in its sandbox: an absolute one, from where run.sh is.
    EXPECT_TRUE(has(script, "\"source=$PWD/work\"")) << script;
    auto parsed = proc::run({"sh", "-n", "-c", script});
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->exit_code, 0) << parsed->err << script;
}

// A coherency cell's ack share is a folder of the reproducer's own, made empty by run.sh:
// the recipe names no folder of the machine the sample ran on.
TEST(RunSample, TheCoherencyAckShareIsAFolderOfTheReproducer) {
    Bench bench;
    vm::GuestSpec spec = bench.booted_spec();
    spec.shares.push_back(
        {vm::ShareKind::v9p, guest::k_ack_tag, "/var/lib/rig/runs/1/c/0/acks", true, "none", ""});
    const std::string script = run::reproducer_script(spec, "bzImage");
    EXPECT_FALSE(has(script, "/var/lib/rig/runs")) << script;
    EXPECT_TRUE(has(script, "mkdir marks acks\n")) << script;
    EXPECT_TRUE(has(script, "path=acks")) << script;
}

TEST(RunSample, ErrorLinesOfAWorkloadThatExitedZero) {
    Bench bench;
    GuestScript script = test::finished_guest(0);
    script.console(milliseconds(20), "<3>9pnet: bad request");
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::errors);
    EXPECT_EQ(sample.error_count, 1);
    EXPECT_TRUE(has(sample.evidence, "console (tail):"));
}

TEST(RunSample, NonZeroWorkloadExitFails) {
    Bench bench;
    core::Sample sample = bench.run(test::finished_guest(2));
    EXPECT_EQ(sample.outcome, core::Outcome::workload_failed);
    EXPECT_EQ(sample.exit_status, 2);
}

TEST(RunSample, AgentSetupFailureFailsTheWorkloadAndIsNotABootTimeout) {
    Bench bench;
    bench.scenario.timeouts.boot = milliseconds(20);
    GuestScript script;
    script.hello(milliseconds(0))
        .channel(milliseconds(5), "error mount-work bm8gc3VjaCBkZXZpY2U=") // "no such device"
        .done(milliseconds(5))
        .exit(milliseconds(60), 0); // poweroff well after the boot timeout
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::workload_failed);
    EXPECT_TRUE(has(sample.evidence, "agent setup failed: mount-work: no such device"));
}

TEST(RunSample, GuestThatPoweredOffWithoutAnEndFailsTheWorkload) {
    Bench bench;
    GuestScript script;
    script.hello(milliseconds(0))
        .channel(milliseconds(5), "start 5000000")
        .exit(milliseconds(20), 0);
    EXPECT_EQ(bench.run(script).outcome, core::Outcome::workload_failed);
}

TEST(RunSample, PanicWithPvpanicExitIsAKernelPanic) {
    Bench bench;
    GuestScript script;
    script.hello(milliseconds(0))
        .channel(milliseconds(5), "start 5000000")
        .console(milliseconds(10), "<0>Kernel panic - not syncing: Fatal exception")
        .exit(milliseconds(12), 1);
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::kernel_panic);
    EXPECT_TRUE(has(sample.evidence, "Kernel panic - not syncing"));
}

TEST(RunSample, PanickedGuestThatStaysUpIsStoppedOnceQuiet) {
    Bench bench;
    bench.pacing.panic_quiet = milliseconds(30);
    GuestScript script;
    script.hello(milliseconds(0)).console(milliseconds(5), "<0>Kernel panic - not syncing: VFS");
    FakeHypervisor hypervisor(script);
    core::Sample sample = bench.run(hypervisor).sample;
    EXPECT_EQ(sample.outcome, core::Outcome::kernel_panic);
    EXPECT_EQ(hypervisor.destroyed(), 1);
    EXPECT_LT(sample.total_seconds, 1.0);
}

TEST(RunSample, PanicWinsOverTheBootTimeoutItCaused) {
    Bench bench;
    bench.scenario.timeouts.boot = milliseconds(20);
    GuestScript script;
    script.console(milliseconds(0), "<0>Kernel panic - not syncing: No working init found");
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::kernel_panic);
    EXPECT_TRUE(has(sample.evidence, "no workload start within 0 s of boot"));
}

TEST(RunSample, PanicWinsOverTheSilenceItCaused) {
    Bench bench;
    bench.scenario.timeouts.silence = milliseconds(30);
    GuestScript script;
    script.hello(milliseconds(0))
        .channel(milliseconds(5), "start 5000000")
        .console(milliseconds(10), "<0>Kernel panic - not syncing: Oops");
    EXPECT_EQ(bench.run(script).outcome, core::Outcome::kernel_panic);
}

TEST(RunSample, PanicWinsOverTheWorkloadTimeoutItCaused) {
    Bench bench;
    bench.scenario.timeouts.workload = milliseconds(30);
    GuestScript script = chatter(milliseconds(200));
    script.channel(milliseconds(5), "start 5000000")
        .console(milliseconds(8), "<0>Kernel panic - not syncing: hung_task");
    EXPECT_EQ(bench.run(script).outcome, core::Outcome::kernel_panic);
}

TEST(RunSample, BusyGuestWithoutAStartTimesOutBooting) {
    Bench bench;
    bench.scenario.timeouts.boot = milliseconds(40);
    FakeHypervisor hypervisor(chatter(milliseconds(500)));
    core::Sample sample = bench.run(hypervisor).sample;
    EXPECT_EQ(sample.outcome, core::Outcome::boot_timeout);
    EXPECT_TRUE(has(sample.evidence, "no workload start within"));
    EXPECT_LT(sample.total_seconds, 0.4);
    EXPECT_EQ(hypervisor.destroyed(), 1);
}

TEST(RunSample, BootTimeoutNoLongerAppliesOnceTheWorkloadStarted) {
    Bench bench;
    // The start comes well inside the boot timeout (a loaded sanitizer run once took
    // more than 5 ms to read it), and the workload runs on well past it.
    bench.scenario.timeouts.boot = milliseconds(60);
    GuestScript script;
    script.hello(milliseconds(0))
        .workload(milliseconds(5), milliseconds(200), 0)
        .done(milliseconds(200))
        .exit(milliseconds(205), 0);
    EXPECT_EQ(bench.run(script).outcome, core::Outcome::ok);
}

TEST(RunSample, BusyWorkloadWithoutAnEndTimesOut) {
    Bench bench;
    bench.scenario.timeouts.workload = milliseconds(40);
    GuestScript script = chatter(milliseconds(500));
    script.channel(milliseconds(5), "start 5000000");
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::workload_timeout);
    EXPECT_TRUE(has(sample.evidence, "the workload did not end within its timeout"));
}

TEST(RunSample, QuietWorkloadTimesOutBeforeItCountsAsSilent) {
    Bench bench;
    bench.scenario.timeouts.workload = milliseconds(30);
    bench.scenario.timeouts.silence = milliseconds(300);
    GuestScript script;
    script.hello(milliseconds(0)).channel(milliseconds(0), "start 0");
    EXPECT_EQ(bench.run(script).outcome, core::Outcome::workload_timeout);
}

TEST(RunSample, SilentWorkloadIsConsoleSilence) {
    Bench bench;
    bench.scenario.timeouts.silence = milliseconds(30);
    GuestScript script;
    script.hello(milliseconds(0)).channel(milliseconds(5), "start 5000000");
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::console_silence);
    EXPECT_TRUE(has(sample.evidence, "no output on console or result channel for"));
}

TEST(RunSample, SilenceBeforeTheBootTimeoutIsConsoleSilence) {
    Bench bench;
    bench.scenario.timeouts.silence = milliseconds(30);
    bench.scenario.timeouts.boot = milliseconds(300);
    GuestScript script;
    script.hello(milliseconds(0));
    EXPECT_EQ(bench.run(script).outcome, core::Outcome::console_silence);
}

TEST(RunSample, GuestThatCannotStartIsAnInfraError) {
    Bench bench;
    GuestScript script;
    script.start_error = "qemu-system-x86_64: cannot open /dev/kvm";
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::infra_error);
    EXPECT_EQ(sample.evidence, "qemu-system-x86_64: cannot open /dev/kvm");
}

TEST(RunSample, MissingBaseInitramfsIsAnInfraErrorBeforeAnyBoot) {
    Bench bench;
    std::filesystem::remove(bench.dir.path() / "base.cpio");
    FakeHypervisor hypervisor(test::finished_guest(0));
    core::Sample sample = bench.run(hypervisor).sample;
    EXPECT_EQ(sample.outcome, core::Outcome::infra_error);
    EXPECT_TRUE(has(sample.evidence, "base.cpio"));
    EXPECT_TRUE(hypervisor.started().empty());
}

TEST(RunSample, HelperDeathWinsOverThePanicAndTimeoutsAfterIt) {
    Bench bench;
    bench.scenario.timeouts.silence = milliseconds(200);
    GuestScript script;
    script.hello(milliseconds(0))
        .channel(milliseconds(5), "start 5000000")
        .console(milliseconds(10), "<0>Kernel panic - not syncing: 9p");
    script.helper_fails_at = milliseconds(15);
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::infra_error);
    EXPECT_TRUE(has(sample.evidence, "virtiofsd exited with status 1"));
}

TEST(RunSample, HelperLeavingAfterTheAgentIsDoneIsNoFailure) {
    Bench bench;
    GuestScript script = test::finished_guest(0);
    script.exit_at = milliseconds(60);
    script.helper_fails_at = milliseconds(35); // virtiofsd sees the device reset
    EXPECT_EQ(bench.run(script).outcome, core::Outcome::ok);
    // Seen once under load: a poll late enough to find the helper gone (35 ms) reads only
    // what came before `done` (30 ms) unless it reads the guest's output again first.
    Bench late;
    late.pacing.poll = milliseconds(50);
    EXPECT_EQ(late.run(script).outcome, core::Outcome::ok);
}

TEST(RunSample, QemuFailingBeforeHelloIsAnInfraErrorNotAPanic) {
    Bench bench;
    GuestScript script;
    script.console(milliseconds(0), "SeaBIOS").exit(milliseconds(5), 1);
    EXPECT_EQ(bench.run(script).outcome, core::Outcome::infra_error);
}

TEST(RunSample, InterruptedSampleIsAbortedWhateverElseHeld) {
    Bench bench;
    bench.interrupted = true;
    bench.scenario.timeouts.boot = milliseconds(1);
    GuestScript script;
    script.console(milliseconds(0), "<0>Kernel panic - not syncing: now");
    FakeHypervisor hypervisor(script);
    core::Sample sample = bench.run(hypervisor).sample;
    EXPECT_EQ(sample.outcome, core::Outcome::aborted);
    EXPECT_TRUE(has(sample.evidence, "rig was interrupted during this sample"));
    EXPECT_EQ(hypervisor.destroyed(), 1);
}

TEST(RunSample, GuestThatWillNotPowerOffIsStoppedAfterItsGrace) {
    Bench bench;
    bench.pacing.poweroff_grace = milliseconds(20);
    GuestScript script = test::finished_guest(0);
    script.exit_at.reset();
    FakeHypervisor hypervisor(script);
    core::Sample sample = bench.run(hypervisor).sample;
    EXPECT_EQ(sample.outcome, core::Outcome::ok);
    EXPECT_EQ(hypervisor.destroyed(), 1);
}

TEST(RunSample, OutputWrittenAtTheExitStillCounts) {
    Bench bench;
    GuestScript script;
    script.hello(milliseconds(0))
        .workload(milliseconds(0), milliseconds(0), 0)
        .channel(milliseconds(0), "metric guest.reads 12 count")
        .done(milliseconds(0))
        .exit(milliseconds(0), 0);
    core::Sample sample = bench.run(script);
    EXPECT_EQ(sample.outcome, core::Outcome::ok);
    ASSERT_EQ(sample.metrics.size(), 1u);
    EXPECT_EQ(sample.metrics[0].name, "guest.reads");
}
