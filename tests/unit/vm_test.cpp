// SPDX-License-Identifier: MIT
// Tests of vm/qemu's argument vectors and programs, of host/facts, and of host/kvm_probe,
// which chooses their accelerator.
#include "host/facts.hpp"
#include "host/kvm_probe.hpp"
#include "proc/process.hpp"
#include "temp_dir.hpp"
#include "util/file.hpp"
#include "vm/qemu.hpp"
#include "vm/qemu_user.hpp"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <thread>

using namespace rig;
using namespace rig::vm;

namespace {

// The value after each occurrence of `option`.
std::vector<std::string> values_of(const std::vector<std::string>& argv,
                                   const std::string& option) {
    std::vector<std::string> values;
    for (size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == option)
            values.push_back(argv[i + 1]);
    return values;
}

bool has(const std::vector<std::string>& argv, const std::string& arg) {
    return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

GuestSpec base_spec() {
    GuestSpec spec;
    spec.name = "cell-abc-0";
    spec.kernel = "/cache/kernels/k1/vmlinux";
    spec.initrd = "/out/run/initrd.cpio";
    spec.cmdline = "console=ttyS0 panic=-1 rdinit=/init";
    spec.memory_mib = 1024;
    spec.cpus = 2;
    spec.accel = core::Accelerator::tcg;
    spec.console_log = "/out/run/console.log";
    spec.channel_log = "/out/run/results.log";
    spec.runtime_dir = "/out/run";
    Share root;
    root.kind = ShareKind::v9p;
    root.tag = "hostroot";
    root.path = "/";
    root.readonly = true;
    spec.shares.push_back(root);
    return spec;
}

Share work_share(ShareKind kind, std::string path) {
    Share share;
    share.kind = kind;
    share.tag = "work";
    share.path = std::move(path);
    return share;
}

} // namespace

TEST(QemuArgv, NinePOnly) {
    GuestSpec spec = base_spec();
    spec.shares.push_back(work_share(ShareKind::v9p, "/srv/build,tree/work"));
    auto argv = qemu_argv(spec, {});

    EXPECT_EQ(argv.front(), "qemu-system-x86_64");
    EXPECT_TRUE(has(argv, "-nodefaults"));
    EXPECT_TRUE(has(argv, "-no-reboot"));
    EXPECT_EQ(values_of(argv, "-machine"), std::vector<std::string>{"q35,accel=tcg"});
    EXPECT_EQ(values_of(argv, "-cpu"), std::vector<std::string>{"max"});
    EXPECT_EQ(values_of(argv, "-m"), std::vector<std::string>{"1024"});
    EXPECT_EQ(values_of(argv, "-smp"), std::vector<std::string>{"2"});
    EXPECT_EQ(values_of(argv, "-action"), std::vector<std::string>{"panic=exit-failure"});
    EXPECT_EQ(values_of(argv, "-kernel"), std::vector<std::string>{"/cache/kernels/k1/vmlinux"});
    EXPECT_EQ(values_of(argv, "-initrd"), std::vector<std::string>{"/out/run/initrd.cpio"});
    EXPECT_EQ(values_of(argv, "-append"),
              std::vector<std::string>{"console=ttyS0 panic=-1 rdinit=/init"});
    // Order matters: the first is ttyS0 (console), the second ttyS1 (the agent's channel).
    EXPECT_EQ(values_of(argv, "-serial"),
              (std::vector<std::string>{"file:/out/run/console.log", "file:/out/run/results.log"}));
    EXPECT_EQ(values_of(argv, "-fsdev"),
              (std::vector<std::string>{
                  "local,id=fs0,path=/,security_model=none,multidevs=remap,readonly=on",
                  "local,id=fs1,path=/srv/build,,tree/work,security_model=none,multidevs=remap"}));
    EXPECT_EQ(values_of(argv, "-device"),
              (std::vector<std::string>{"pvpanic-pci", "virtio-9p-pci,fsdev=fs0,mount_tag=hostroot",
                                        "virtio-9p-pci,fsdev=fs1,mount_tag=work"}));
    EXPECT_TRUE(values_of(argv, "-object").empty());
    EXPECT_TRUE(values_of(argv, "-chardev").empty());
}

TEST(QemuArgv, Kvm) {
    GuestSpec spec = base_spec();
    spec.accel = core::Accelerator::kvm;
    auto argv = qemu_argv(spec, {});
    EXPECT_EQ(values_of(argv, "-machine"), std::vector<std::string>{"q35,accel=kvm"});
    EXPECT_EQ(values_of(argv, "-cpu"), std::vector<std::string>{"host"});
}

TEST(QemuArgv, Virtiofs) {
    GuestSpec spec = base_spec();
    spec.memory_mib = 2048;
    spec.shares.push_back(work_share(ShareKind::virtiofs, "/srv/work"));
    auto argv = qemu_argv(spec, {"/out/run/virtiofsd-work.sock"});

    EXPECT_EQ(values_of(argv, "-machine"),
              std::vector<std::string>{"q35,accel=tcg,memory-backend=mem"});
    // vhost-user needs all guest RAM in the shared memfd: its size must equal -m.
    EXPECT_EQ(values_of(argv, "-m"), std::vector<std::string>{"2048"});
    EXPECT_EQ(values_of(argv, "-object"),
              std::vector<std::string>{"memory-backend-memfd,id=mem,size=2048M,share=on"});
    EXPECT_EQ(values_of(argv, "-chardev"),
              std::vector<std::string>{"socket,id=fs1,path=/out/run/virtiofsd-work.sock"});
    EXPECT_EQ(values_of(argv, "-device"),
              (std::vector<std::string>{"pvpanic-pci", "virtio-9p-pci,fsdev=fs0,mount_tag=hostroot",
                                        "vhost-user-fs-pci,chardev=fs1,tag=work"}));
    // The root stays a read-only 9p share; only it has an -fsdev.
    EXPECT_EQ(values_of(argv, "-fsdev"),
              std::vector<std::string>{
                  "local,id=fs0,path=/,security_model=none,multidevs=remap,readonly=on"});
}

// microvm: no PCI, so virtio on MMIO, the ISA pvpanic, and the agent's channel on a second
// ISA serial port that microvm does not make by itself.
TEST(QemuArgv, MicrovmPutsEveryDeviceOffPci) {
    GuestSpec spec = base_spec();
    spec.machine = core::Machine::microvm;
    spec.channel_log = "/out/a,b/results.log";
    spec.shares.push_back(work_share(ShareKind::virtiofs, "/srv/work"));
    spec.scratch_disk = "/out/run/scratch.img";
    auto argv = qemu_argv(spec, {"/out/run/virtiofsd-work.sock"});
    EXPECT_EQ(values_of(argv, "-machine"),
              std::vector<std::string>{"microvm,accel=tcg,acpi=on,pit=on,memory-backend=mem"});
    EXPECT_EQ(values_of(argv, "-serial"), std::vector<std::string>{"file:/out/run/console.log"});
    EXPECT_EQ(values_of(argv, "-global"),
              std::vector<std::string>{"virtio-mmio.force-legacy=false"});
    EXPECT_EQ(values_of(argv, "-chardev"),
              (std::vector<std::string>{"file,id=channel,path=/out/a,,b/results.log",
                                        "socket,id=fs1,path=/out/run/virtiofsd-work.sock"}));
    EXPECT_EQ(values_of(argv, "-device"),
              (std::vector<std::string>{"pvpanic", "isa-serial,chardev=channel",
                                        "virtio-9p-device,fsdev=fs0,mount_tag=hostroot",
                                        "vhost-user-fs-device,chardev=fs1,tag=work",
                                        std::string("virtio-blk-device,drive=scratch,serial=") +
                                            k_scratch_serial}));
    for (const std::string& arg : argv)
        EXPECT_EQ(arg.find("-pci"), std::string::npos) << arg;
    spec.accel = core::Accelerator::kvm;
    EXPECT_EQ(values_of(qemu_argv(spec, {"/s"}), "-machine"),
              std::vector<std::string>{"microvm,accel=kvm,acpi=on,pit=on,memory-backend=mem"});
}

// QEMU splits -chardev at single commas just as it does -fsdev; the socket lives under the
// results directory, which follows the user's --db path.
TEST(QemuArgv, CommaInSocketPathEscaped) {
    GuestSpec spec = base_spec();
    spec.shares.push_back(work_share(ShareKind::virtiofs, "/srv/work"));
    auto argv = qemu_argv(spec, {"/data/a,b/runs/1/virtiofsd-work.sock"});
    EXPECT_EQ(values_of(argv, "-chardev"),
              std::vector<std::string>{"socket,id=fs1,path=/data/a,,b/runs/1/virtiofsd-work.sock"});
}

TEST(QemuArgv, Virtiofsd) {
    Share share = work_share(ShareKind::virtiofs, "/srv/work");
    share.virtiofs_cache = "always";
    EXPECT_EQ(virtiofsd_argv("/usr/lib/qemu/virtiofsd", share, "/out/run/virtiofsd-work.sock"),
              (std::vector<std::string>{"/usr/lib/qemu/virtiofsd",
                                        "--socket-path=/out/run/virtiofsd-work.sock", "-o",
                                        "source=/srv/work", "-o", "cache=always"}));
    EXPECT_EQ(virtiofsd_argv("virtiofsd", work_share(ShareKind::virtiofs, "/w"), "/s").back(),
              "cache=auto");
}

TEST(HostFacts, QemuVersion) {
    EXPECT_EQ(host::parse_qemu_version(
                  "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18)\n"
                  "Copyright (c) 2003-2022 Fabrice Bellard and the QEMU Project developers\n"),
              "7.2.22");
    EXPECT_EQ(host::parse_qemu_version("QEMU emulator version 8.2.2 (Debian 1:8.2.2+ds-0ubuntu1)"),
              "8.2.2");
    EXPECT_EQ(host::parse_qemu_version("QEMU emulator version 9.0"), "9.0");
    EXPECT_EQ(host::parse_qemu_version(""), "");
    EXPECT_EQ(host::parse_qemu_version("qemu-system-x86_64: command not found"), "");
}

TEST(KvmProbe, ChoosesTheAccelerator) {
    using core::Accel;
    using core::Accelerator;
    for (auto kvm : {host::Kvm::runs_guests, host::Kvm::no_device, host::Kvm::not_read_write,
                     host::Kvm::cannot_run_guests}) {
        EXPECT_EQ(*host::choose_accel(Accel::tcg, kvm), Accelerator::tcg);
        EXPECT_EQ(*host::choose_accel(Accel::auto_detect, kvm),
                  kvm == host::Kvm::runs_guests ? Accelerator::kvm : Accelerator::tcg);
    }
    EXPECT_EQ(*host::choose_accel(Accel::kvm, host::Kvm::runs_guests), Accelerator::kvm);
    // Asked for where no guest runs under it: an infra error, never a quiet TCG.
    auto refused = host::choose_accel(Accel::kvm, host::Kvm::cannot_run_guests);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::infra);
    EXPECT_EQ(refused.error().message,
              "guest.accel is kvm but /dev/kvm opens but cannot run a guest");
    EXPECT_FALSE(host::choose_accel(Accel::kvm, host::Kvm::no_device));
}

TEST(KvmProbe, OnlyTheDebugExitStatusMeansTheGuestRan) {
    proc::RunResult result;
    result.exit_code = host::k_probe_guest_ran;
    EXPECT_EQ(host::probe_outcome(result), host::ProbeBoot::guest_ran);
    result.exit_code = 1; // "failed to initialize kvm", or KVM_RUN failed
    EXPECT_EQ(host::probe_outcome(result), host::ProbeBoot::guest_failed);
    result.exit_code = 0; // a guest that ended without reaching the port
    EXPECT_EQ(host::probe_outcome(result), host::ProbeBoot::guest_failed);
    result.exit_code = -1; // hung, killed at the timeout
    result.timed_out = true;
    EXPECT_EQ(host::probe_outcome(result), host::ProbeBoot::guest_hung);
    EXPECT_EQ(host::k_probe_guest_ran, 99);
}

TEST(KvmProbe, BootSectorAndArgv) {
    std::string sector = host::probe_boot_sector();
    ASSERT_EQ(sector.size(), 512u);
    EXPECT_EQ(sector.substr(0, 5), std::string("\xb0\x31\xe6\xf4\xf4"));
    EXPECT_EQ(sector.substr(510), std::string("\x55\xaa"));
    auto argv = host::probe_argv(core::Accelerator::kvm, "/cache/kvm-probe/boot-sector.img");
    EXPECT_EQ(values_of(argv, "-accel"), std::vector<std::string>{"kvm"});
    EXPECT_EQ(values_of(argv, "-device"),
              std::vector<std::string>{"isa-debug-exit,iobase=0xf4,iosize=0x04"});
    EXPECT_EQ(values_of(argv, "-drive"),
              std::vector<std::string>{
                  "file=/cache/kvm-probe/boot-sector.img,format=raw,if=ide,file.locking=off"});
    EXPECT_TRUE(has(argv, "-no-reboot"));
}

// The real QEMU, under TCG, which every machine has: the boot sector boots, its guest
// reaches the exit port, and the status is the one the probe looks for.
TEST(KvmProbe, TheGuestRunsUnderTcg) {
    if (!proc::find_program("qemu-system-x86_64"))
        GTEST_SKIP() << "qemu-system-x86_64 is not installed";
    test::TempDir dir;
    auto boot = host::boot_probe_guest(core::Accelerator::tcg, dir.path());
    ASSERT_TRUE(boot) << boot.error().message;
    EXPECT_EQ(*boot, host::ProbeBoot::guest_ran);
}

proc::RunResult exited(int status) {
    proc::RunResult result;
    result.exit_code = status;
    return result;
}

proc::RunResult hung() {
    proc::RunResult result;
    result.timed_out = true;
    return result;
}

// A stand-in for QEMU that counts its boots and ends as told for each accelerator.
struct CountingQemu {
    proc::RunResult kvm = exited(host::k_probe_guest_ran);
    proc::RunResult tcg = exited(host::k_probe_guest_ran);
    std::chrono::milliseconds kvm_takes{0};
    int boots = 0;
    std::vector<std::string> last_argv;
    host::QemuRunner runner() {
        return [this](const std::vector<std::string>& argv, const proc::RunOptions& options) {
            ++boots;
            last_argv = argv;
            if (values_of(argv, "-accel").at(0) == "kvm")
                std::this_thread::sleep_for(kvm_takes);
            EXPECT_EQ(options.timeout, host::k_probe_timeout);
            return Expected<proc::RunResult>(values_of(argv, "-accel").at(0) == "kvm" ? kvm : tcg);
        };
    }
};

TEST(KvmProbe, TheAnswerIsKeptPerHostKernel) {
    test::TempDir dir;
    auto file = host::probe_answer_file(dir.path(), "node1", "6.1.0-57-amd64");
    EXPECT_EQ(file, dir.path() / "kvm-probe" / "node1_6.1.0-57-amd64");
    EXPECT_NE(host::probe_answer_file(dir.path(), "node1", "6.12.0-1-amd64"), file);
    EXPECT_EQ(host::probe_answer_file(dir.path(), "a/b", "x y").filename(), "a_b_x_y");

    CountingQemu qemu;
    auto first = host::kvm_boot_answer(file, qemu.runner());
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*first, host::ProbeBoot::guest_ran);
    EXPECT_EQ(qemu.boots, 2) << "KVM, then TCG to compare it with";
    EXPECT_EQ(util::read_file(file), "kvm\n");
    EXPECT_EQ(util::read_file(dir.path() / "kvm-probe" / "boot-sector.img"),
              host::probe_boot_sector());

    auto second = host::kvm_boot_answer(file, qemu.runner());
    ASSERT_TRUE(second);
    EXPECT_EQ(*second, host::ProbeBoot::guest_ran);
    EXPECT_EQ(qemu.boots, 2) << "the second call must not boot";

    // A failed boot is kept too: the next run on this host kernel goes straight to TCG.
    CountingQemu broken;
    broken.kvm = exited(1);
    auto other = host::probe_answer_file(dir.path(), "node2", "6.1.0-57-amd64");
    EXPECT_EQ(*host::kvm_boot_answer(other, broken.runner()), host::ProbeBoot::guest_failed);
    EXPECT_EQ(*host::kvm_boot_answer(other, broken.runner()), host::ProbeBoot::guest_failed);
    EXPECT_EQ(broken.boots, 2);
    EXPECT_EQ(util::read_file(other), "tcg\n");

    // A file that holds no answer is probed again and replaced.
    ASSERT_TRUE(util::write_file_atomically(other, "kv"));
    EXPECT_EQ(*host::kvm_boot_answer(other, qemu.runner()), host::ProbeBoot::guest_ran);
    EXPECT_EQ(qemu.boots, 4);
    EXPECT_EQ(util::read_file(other), "kvm\n");
}

// A /dev/kvm that runs the guest, but slower than TCG does (seconds, as an emulated or
// badly nested KVM does), is no KVM to boot guests with.
TEST(KvmProbe, AKvmSlowerThanTcgIsNotUsed) {
    test::TempDir dir;
    auto file = host::probe_answer_file(dir.path(), "node1", "6.1.0-57-amd64");
    CountingQemu slow;
    slow.kvm_takes = std::chrono::milliseconds(700);
    EXPECT_EQ(*host::kvm_boot_answer(file, slow.runner()), host::ProbeBoot::guest_failed);
    EXPECT_EQ(util::read_file(file), "tcg\n");
}

TEST(KvmProbe, AHangIsKeptOnlyWhenTcgRunsTheGuestInTime) {
    test::TempDir dir;
    auto file = host::probe_answer_file(dir.path(), "node1", "6.1.0-57-amd64");
    // KVM hangs where TCG runs the guest: that KVM is no use, for good.
    CountingQemu slow_kvm;
    slow_kvm.kvm = hung();
    EXPECT_EQ(*host::kvm_boot_answer(file, slow_kvm.runner()), host::ProbeBoot::guest_hung);
    EXPECT_EQ(slow_kvm.boots, 2);
    EXPECT_EQ(values_of(slow_kvm.last_argv, "-accel"), std::vector<std::string>{"tcg"});
    EXPECT_EQ(util::read_file(file), "tcg\n");
    EXPECT_EQ(*host::kvm_boot_answer(file, slow_kvm.runner()), host::ProbeBoot::guest_failed);
    EXPECT_EQ(slow_kvm.boots, 2);

    // Both hang: a host too busy to tell. This run gets TCG, the next one asks again.
    auto other = host::probe_answer_file(dir.path(), "node2", "6.1.0-57-amd64");
    CountingQemu busy;
    busy.kvm = hung();
    busy.tcg = hung();
    EXPECT_EQ(*host::kvm_boot_answer(other, busy.runner()), host::ProbeBoot::guest_hung);
    EXPECT_FALSE(std::filesystem::exists(other));
    EXPECT_EQ(*host::kvm_boot_answer(other, busy.runner()), host::ProbeBoot::guest_hung);
    EXPECT_EQ(busy.boots, 4);
}

TEST(KvmProbe, AQemuThatCannotStartKeepsNoAnswer) {
    test::TempDir dir;
    auto file = host::probe_answer_file(dir.path(), "node1", "6.1.0-57-amd64");
    host::QemuRunner missing = [](const std::vector<std::string>&, const proc::RunOptions&) {
        return Expected<proc::RunResult>(fail(ErrorKind::infra, "qemu-system-x86_64: not found"));
    };
    auto answer = host::kvm_boot_answer(file, missing);
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().message, "qemu-system-x86_64: not found");
    EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(QemuArgv, ProtocolTraceOnlyWhenAsked) {
    GuestSpec spec = base_spec();
    EXPECT_TRUE(values_of(qemu_argv(spec, {}), "-trace").empty());
    spec.protocol_trace = "/out/run/9p.trace";
    auto argv = qemu_argv(spec, {});
    EXPECT_EQ(values_of(argv, "-trace"),
              std::vector<std::string>{"events=/out/run/9p.trace.events"});
    EXPECT_EQ(values_of(argv, "-D"), std::vector<std::string>{"/out/run/9p.trace"});
}

TEST(QemuArgv, VirtiofsdLogsRequestsOnlyWhenAsked) {
    Share share = work_share(ShareKind::virtiofs, "/srv/work");
    auto quiet = virtiofsd_argv("/usr/lib/qemu/virtiofsd", share, "/run/s.sock");
    EXPECT_EQ(std::count(quiet.begin(), quiet.end(), "-d"), 0);
    share.log_requests = true;
    auto argv = virtiofsd_argv("/usr/lib/qemu/virtiofsd", share, "/run/s.sock");
    EXPECT_EQ(argv.back(), "-d");
    EXPECT_EQ(virtiofsd_log("/out/run", "work"), "/out/run/virtiofsd-work.log");
}

// A run asks before its first sample; QEMU missing from PATH is an error naming it.
TEST(QemuHypervisor, FindsItsProgramsOnlyInPath) {
    auto hypervisor = make_qemu_hypervisor();
    const char* saved = std::getenv("PATH");
    std::string path = saved ? saved : "";
    if (!proc::find_program("qemu-system-x86_64"))
        GTEST_SKIP() << "qemu-system-x86_64 is not installed here";
    EXPECT_TRUE(hypervisor->find_programs({ShareKind::v9p}));
    ::setenv("PATH", "/nonexistent", 1);
    auto missing = hypervisor->find_programs({ShareKind::v9p});
    ::setenv("PATH", path.c_str(), 1);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().kind, ErrorKind::infra);
    EXPECT_NE(missing.error().message.find("qemu-system-x86_64 not found in PATH"),
              std::string::npos)
        << missing.error().message;
    EXPECT_NE(missing.error().message.find("rig doctor"), std::string::npos);
}

TEST(HostFacts, VirtiofsdPlacesNameEveryCandidate) {
    std::string places = host::virtiofsd_places();
    for (const char* candidate : host::k_virtiofsd_paths)
        EXPECT_NE(places.find(candidate), std::string::npos) << places;
    EXPECT_NE(places.find("PATH"), std::string::npos);
}

TEST(QemuArgv, ScratchDiskIsAVirtioBlkDriveWithItsSerial) {
    GuestSpec spec = base_spec();
    EXPECT_TRUE(values_of(qemu_argv(spec, {}), "-drive").empty());
    spec.scratch_disk = "/out/run,1/scratch.img";
    auto argv = qemu_argv(spec, {});
    EXPECT_EQ(
        values_of(argv, "-drive"),
        std::vector<std::string>{"file=/out/run,,1/scratch.img,if=none,format=raw,id=scratch"});
    EXPECT_TRUE(has(argv, "virtio-blk-pci,drive=scratch,serial=rig-scratch"));
}

// QEMU run as its own user sees rig's files through binds (vm/qemu_user.hpp).
TEST(QemuUser, PathsInTheRuntimeFolderMoveWithItOthersGetBindsOfTheirOwn) {
    GuestSpec spec;
    spec.runtime_dir = "/results/runs/1/cell/0";
    spec.kernel = "/cache/kernels/abc/vmlinux";
    spec.initrd = "/results/runs/1/cell/0/initrd.cpio";
    spec.console_log = "/results/runs/1/cell/0/console.log";
    spec.channel_log = "/results/runs/1/cell/0/channel.log";
    spec.protocol_trace = "/results/runs/1/cell/0/9p.trace";
    spec.shares = {{ShareKind::v9p, "rootusr", "/usr", true, "none", ""},
                   {ShareKind::v9p, "work", "/results/runs/1/cell/0/share", false, "none", ""},
                   {ShareKind::virtiofs, "vfs", "/results/runs/1/cell/0/share", false, "none", ""}};
    auto seen = seen_by_user(spec);
    ASSERT_TRUE(seen) << seen.error().message;
    EXPECT_EQ(seen->spec.runtime_dir, "/tmp/run");
    EXPECT_EQ(seen->spec.kernel, "/tmp/kernel");
    EXPECT_EQ(seen->spec.initrd, "/tmp/run/initrd.cpio");
    EXPECT_EQ(seen->spec.console_log, "/tmp/run/console.log");
    EXPECT_EQ(seen->spec.protocol_trace, "/tmp/run/9p.trace");
    EXPECT_EQ(seen->spec.shares[0].path, "/tmp/share0");
    EXPECT_EQ(seen->spec.shares[1].path, "/tmp/run/share");
    EXPECT_EQ(seen->spec.shares[2].path, spec.shares[2].path) << "virtiofsd serves it, as root";
    ASSERT_EQ(seen->binds.size(), 3u);
    EXPECT_EQ(seen->binds[0].source, spec.runtime_dir);
    EXPECT_FALSE(seen->binds[0].readonly);
    EXPECT_EQ(seen->binds[1].source, spec.kernel);
    EXPECT_TRUE(seen->binds[1].readonly);
    EXPECT_EQ(seen->binds[2].source, "/usr");
    EXPECT_TRUE(seen->binds[2].readonly);

    spec.console_log = "/elsewhere/console.log";
    EXPECT_FALSE(seen_by_user(spec)) << "a file QEMU creates must be in the runtime folder";
}

TEST(Qemu, TheGuestsEmulationIsSandboxed) {
    GuestSpec spec;
    spec.kernel = "/k";
    auto argv = qemu_argv(spec, {});
    EXPECT_EQ(values_of(argv, "-sandbox"),
              (std::vector<std::string>{
                  "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"}));
}
