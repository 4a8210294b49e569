// SPDX-License-Identifier: MIT
// The QEMU backend.
#include "vm/qemu.hpp"

#include "host/facts.hpp"
#include "host/topology.hpp"
#include "proc/cpu.hpp"
#include "proc/process.hpp"
#include "util/strings.hpp"
#include "vm/protocol_trace.hpp"
#include "vm/qemu_user.hpp"

#include <fstream>
#include <thread>
#include <unistd.h>

namespace rig::vm {

namespace fs = std::filesystem;

std::string escape_commas(const std::string& value) {
    std::string out;
    for (char c : value)
        out += c == ',' ? std::string(",,") : std::string(1, c);
    return out;
}

std::vector<std::string> protocol_trace_options(const fs::path& log) {
    return {"-trace", "events=" + escape_commas(log.string() + ".events"), "-D", log.string()};
}

Expected<void> write_protocol_trace_events(const fs::path& log) {
    std::ofstream out(log.string() + ".events", std::ios::trunc);
    out << protocol_trace_events();
    if (!out)
        return fail(ErrorKind::infra, "cannot write " + log.string() + ".events");
    return {};
}

namespace {

constexpr const char* k_qemu = "qemu-system-x86_64";

// The C virtiofsd parses -o with libfuse's option parser, where "\," is a literal comma.
std::string escape_fuse_option(const std::string& value) {
    std::string out;
    for (char c : value) {
        if (c == ',' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

// The machine and the names of its devices: microvm has no PCI, so its virtio devices sit on
// virtio-mmio (which the kernel finds through microvm's ACPI tables), its pvpanic is the ISA
// one, and its second serial port is added by hand (microvm makes only the first).
struct MachineParts {
    std::string machine;
    const char* virtio_suffix; // "-pci" or "-device"
    const char* pvpanic;
};

MachineParts machine_parts(const GuestSpec& spec) {
    std::string accel = "accel=" + std::string(core::to_string(spec.accel));
    if (spec.machine == core::Machine::microvm)
        // pit=on: without a PIT the boot's TSC calibration has no reference at all.
        return {"microvm," + accel + ",acpi=on,pit=on", "-device", "pvpanic"};
    return {"q35," + accel, "-pci", "pvpanic-pci"};
}

} // namespace

std::vector<std::string> qemu_argv(const GuestSpec& spec,
                                   const std::vector<fs::path>& virtiofs_sockets) {
    bool virtiofs = !virtiofs_sockets.empty();
    const MachineParts parts = machine_parts(spec);
    std::string machine = parts.machine;
    auto virtio = [&](const char* device) { return device + std::string(parts.virtio_suffix); };
    // vhost-user needs guest RAM that virtiofsd can map: a shared memfd as large as -m.
    if (virtiofs)
        machine += ",memory-backend=mem";
    std::vector<std::string> argv{
        k_qemu, "-nodefaults", "-no-user-config", "-display", "none",
        // Once running, the guest's device emulation may not exec, fork, change its user or
        // its scheduling, nor make obsolete system calls (seccomp).
        "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
        "-name", "guest=" + escape_commas(spec.name), "-machine", machine, "-cpu",
        spec.accel == core::Accelerator::kvm ? "host" : "max", "-m",
        std::to_string(spec.memory_mib), "-smp", std::to_string(spec.cpus),
        // A reboot becomes an exit, and a guest panic a non-zero exit status.
        "-no-reboot", "-device", parts.pvpanic, "-action", "panic=exit-failure", "-kernel",
        spec.kernel.string(), "-initrd", spec.initrd.string(), "-append", spec.cmdline, "-serial",
        "file:" + spec.console_log.string()};
    if (spec.machine == core::Machine::microvm)
        // virtio-mmio speaks legacy virtio unless told otherwise, which virtiofsd refuses.
        argv.insert(argv.end(), {"-global", "virtio-mmio.force-legacy=false", "-chardev",
                                 "file,id=channel,path=" + escape_commas(spec.channel_log.string()),
                                 "-device", "isa-serial,chardev=channel"});
    else
        argv.insert(argv.end(), {"-serial", "file:" + spec.channel_log.string()});
    if (virtiofs) {
        argv.insert(argv.end(), {"-object", "memory-backend-memfd,id=mem,size=" +
                                                std::to_string(spec.memory_mib) + "M,share=on"});
    }
    size_t socket = 0;
    for (size_t i = 0; i < spec.shares.size(); ++i) {
        const Share& share = spec.shares[i];
        std::string id = "fs" + std::to_string(i);
        if (share.kind == ShareKind::v9p) {
            std::string path = escape_commas(share.path.string());
            std::string fsdev = "local,id=" + id + ",path=" + path +
                                ",security_model=" + share.security_model + ",multidevs=remap";
            if (share.readonly)
                fsdev += ",readonly=on";
            argv.insert(argv.end(),
                        {"-fsdev", fsdev, "-device",
                         virtio("virtio-9p") + ",fsdev=" + id + ",mount_tag=" + share.tag});
        } else {
            argv.insert(
                argv.end(),
                {"-chardev",
                 "socket,id=" + id + ",path=" + escape_commas(virtiofs_sockets[socket++].string()),
                 "-device", virtio("vhost-user-fs") + ",chardev=" + id + ",tag=" + share.tag});
        }
    }
    if (!spec.scratch_disk.empty())
        argv.insert(
            argv.end(),
            {"-drive",
             "file=" + escape_commas(spec.scratch_disk.string()) + ",if=none,format=raw,id=scratch",
             "-device", virtio("virtio-blk") + ",drive=scratch,serial=" + k_scratch_serial});
    if (!spec.protocol_trace.empty())
        for (std::string& option : protocol_trace_options(spec.protocol_trace))
            argv.push_back(std::move(option));
    return argv;
}

std::vector<std::string> virtiofsd_argv(const fs::path& daemon, const Share& share,
                                        const fs::path& socket) {
    std::vector<std::string> argv{daemon.string(),
                                  "--socket-path=" + socket.string(),
                                  "-o",
                                  "source=" + escape_fuse_option(share.path.string()),
                                  "-o",
                                  "cache=" + share.virtiofs_cache};
    if (share.log_requests)
        argv.push_back("-d");
    return argv;
}

fs::path virtiofsd_log(const fs::path& runtime_dir, const std::string& tag) {
    return runtime_dir / ("virtiofsd-" + tag + ".log");
}

namespace {

class QemuVm final : public Vm {
public:
    // `handed_over`: the runtime folder QEMU's user was given, taken back once it is gone.
    QemuVm(std::unique_ptr<proc::Child> qemu, std::vector<std::unique_ptr<proc::Child>> helpers,
           std::string argv_text, fs::path handed_over)
        : m_qemu(std::move(qemu)), m_helpers(std::move(helpers)), m_argv(std::move(argv_text)),
          m_handed_over(std::move(handed_over)) {}
    ~QemuVm() override { destroy(); }

    std::optional<int> poll() override {
        if (m_qemu->running())
            return std::nullopt;
        return m_qemu->exit_status();
    }

    CpuTimes cpu_times() override {
        CpuTimes times;
        if (m_qemu->running())
            times.vm_seconds = proc::cpu_seconds(m_qemu->pid()).value_or(0);
        for (auto& helper : m_helpers)
            if (helper->running())
                times.helper_seconds += proc::tree_cpu_seconds(helper->pid()).value_or(0);
        return times;
    }

    void destroy() override {
        // QEMU first: virtiofsd exits by itself when its vhost-user peer goes away.
        if (m_qemu->running())
            m_qemu->stop(std::chrono::seconds(2));
        for (auto& helper : m_helpers)
            if (helper->running())
                helper->stop(std::chrono::seconds(2));
        if (!m_handed_over.empty())
            take_back(std::exchange(m_handed_over, {}));
    }

    std::optional<std::string> helper_failure() override {
        for (auto& helper : m_helpers)
            if (!helper->running() && m_qemu->running())
                return "virtiofsd exited with status " +
                       std::to_string(helper->exit_status().value_or(-1));
        return std::nullopt;
    }

    std::string describe() const override { return m_argv; }

private:
    std::unique_ptr<proc::Child> m_qemu;
    std::vector<std::unique_ptr<proc::Child>> m_helpers;
    std::string m_argv;
    fs::path m_handed_over;
};

std::string virtiofsd_missing() {
    return "virtiofsd not found (looked at " + host::virtiofsd_places() +
           "); fs: virtiofs cells need it: install qemu-system-common (`rig doctor` checks "
           "what rig needs)";
}

class QemuHypervisor final : public Hypervisor {
public:
    std::string name() const override { return "qemu"; }
    bool logs_virtiofs_requests() const override { return true; }
    bool boots_microvm() const override { return true; }
    bool sees_rigs_mounts() const override { return true; }
    Expected<std::vector<core::HostCpu>> host_cpus() override { return host::local_cpus(); }

    Expected<void> find_programs(const std::set<ShareKind>& kinds) const override {
        if (!proc::find_program(k_qemu))
            return fail(ErrorKind::infra, std::string(k_qemu) +
                                              " not found in PATH: install qemu-system-x86 "
                                              "(`rig doctor` checks what rig needs)");
        if (kinds.count(ShareKind::virtiofs) && !host::find_virtiofsd())
            return fail(ErrorKind::infra, virtiofsd_missing());
        return {};
    }

    Expected<std::unique_ptr<Vm>> start(const GuestSpec& spec) override {
        std::error_code ec;
        fs::create_directories(spec.runtime_dir, ec);
        std::vector<std::unique_ptr<proc::Child>> helpers;
        std::vector<fs::path> sockets;
        for (const Share& share : spec.shares) {
            if (share.kind != ShareKind::virtiofs)
                continue;
            auto daemon = host::find_virtiofsd();
            if (!daemon)
                return fail(ErrorKind::infra, virtiofsd_missing());
            if (::geteuid() != 0)
                return fail(ErrorKind::infra,
                            "fs: virtiofs cells need root: virtiofsd (Debian 12's) must start "
                            "as root to sandbox itself; run rig as root (QEMU still runs as "
                            "rig-qemu), or leave virtiofs out of the matrix. The other cells "
                            "run as this user.");
            fs::path socket = spec.runtime_dir / ("virtiofsd-" + share.tag + ".sock");
            fs::remove(socket, ec);
            proc::SpawnOptions options;
            options.stdout_file = virtiofsd_log(spec.runtime_dir, share.tag);
            options.cpus = spec.host_cpus;
            helpers.push_back(
                RIG_TRY(proc::Child::spawn(virtiofsd_argv(*daemon, share, socket), options)));
            RIG_TRY(wait_for_socket(*helpers.back(), socket, options.stdout_file));
            sockets.push_back(socket);
        }
        if (!spec.protocol_trace.empty())
            RIG_TRY(write_protocol_trace_events(spec.protocol_trace));
        proc::SpawnOptions options;
        options.stdout_file = spec.runtime_dir / "qemu.log";
        // vCPU, I/O and main-loop threads alike: the guest's set is all it may disturb.
        options.cpus = spec.host_cpus;
        GuestSpec seen = spec;
        fs::path handed_over;
        if (!m_account)
            return tl::unexpected(m_account.error());
        if (const std::optional<host::Account>& account = *m_account) {
            // rig is root: QEMU runs as its own user, which sees rig's files through binds.
            SeenSpec bound = RIG_TRY(seen_by_user(spec));
            RIG_TRY(hand_over(spec, *account));
            handed_over = spec.runtime_dir;
            // virtiofsd's sockets, in the runtime folder, became the user's with it.
            for (fs::path& socket : sockets)
                socket = bound.spec.runtime_dir / socket.filename();
            seen = std::move(bound.spec);
            // Its paths are the binds': its name says which sample's folder it serves, so
            // that `ps` (and a test looking for orphans) can tell.
            seen.name = spec.name + " in " + spec.runtime_dir.string();
            options.confinement.binds = std::move(bound.binds);
            options.confinement.user = host::credentials(*account);
        }
        auto argv = qemu_argv(seen, sockets);
        write_argv(spec.runtime_dir / "qemu.argv", argv);
        auto qemu = proc::Child::spawn(argv, options);
        if (!qemu) {
            if (!handed_over.empty())
                take_back(handed_over);
            return tl::unexpected(qemu.error());
        }
        return std::unique_ptr<Vm>(std::make_unique<QemuVm>(
            std::move(*qemu), std::move(helpers), util::join(argv, " "), std::move(handed_over)));
    }

private:
    // Who QEMU runs as (host::qemu_account), looked up once for every guest this starts.
    const Expected<std::optional<host::Account>> m_account = host::qemu_account();

    // For a developer who wants to boot the same guest by hand: one argument a line.
    // rig never reads it back or runs it.
    static void write_argv(const fs::path& file, const std::vector<std::string>& argv) {
        std::ofstream out(file, std::ios::trunc);
        for (const std::string& argument : argv)
            out << argument << "\n";
    }

    static Expected<void> wait_for_socket(proc::Child& daemon, const fs::path& socket,
                                          const fs::path& log) {
        for (int i = 0; i < 200; ++i) {
            if (fs::exists(socket))
                return {};
            if (!daemon.running())
                return fail(ErrorKind::infra,
                            "virtiofsd exited before creating its socket; see " + log.string());
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return fail(ErrorKind::infra, "virtiofsd did not create " + socket.string() + " in 10 s");
    }
};

} // namespace

std::unique_ptr<Hypervisor> make_qemu_hypervisor() {
    return std::make_unique<QemuHypervisor>();
}

} // namespace rig::vm
