// SPDX-License-Identifier: MIT
// Tests of vm/qemu's argument vectors and programs, and of host/facts, which chooses their
// accelerator.
#include "host/facts.hpp"
#include "proc/process.hpp"
#include "vm/qemu.hpp"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>

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
    spec.accel = "tcg";
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
    spec.accel = "kvm";
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

TEST(HostFacts, ChooseAccel) {
    EXPECT_EQ(host::choose_accel(core::Accel::auto_detect, true), "kvm");
    EXPECT_EQ(host::choose_accel(core::Accel::auto_detect, false), "tcg");
    EXPECT_EQ(host::choose_accel(core::Accel::tcg, true), "tcg");
    EXPECT_EQ(host::choose_accel(core::Accel::tcg, false), "tcg");
    // Asked for and absent: the caller reports it; choose_accel does not hide it.
    EXPECT_EQ(host::choose_accel(core::Accel::kvm, true), "kvm");
    EXPECT_EQ(host::choose_accel(core::Accel::kvm, false), "kvm");
}

TEST(HostFacts, CpuHasVirtualization) {
    // /proc/cpuinfo as Linux prints it: "flags" is never the first line.
    auto cpuinfo = [](const std::string& flags) {
        return "processor\t: 0\n"
               "vendor_id\t: GenuineIntel\n"
               "model name\t: Intel(R) Xeon(R) CPU\n"
               "flags\t\t: fpu vme de pse tsc msr pae mce " +
               flags +
               " sse sse2\n"
               "bugs\t\t: spectre_v1 spectre_v2\n"
               "\n";
    };
    EXPECT_TRUE(host::cpu_has_virtualization(cpuinfo("vmx ept")));
    EXPECT_TRUE(host::cpu_has_virtualization(cpuinfo("svm npt")));
    EXPECT_FALSE(host::cpu_has_virtualization(cpuinfo("hypervisor")));
    // Substrings of other flags do not count.
    EXPECT_FALSE(host::cpu_has_virtualization(cpuinfo("svm_lock vmxx")));
    // Only the flags line counts, not a word elsewhere.
    EXPECT_FALSE(host::cpu_has_virtualization("model name\t: vmx svm\nflags\t\t: fpu sse\n"));
    EXPECT_FALSE(host::cpu_has_virtualization(""));
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
