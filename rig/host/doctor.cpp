// SPDX-License-Identifier: MIT
// Host checks for `rig doctor`.
#include "host/doctor.hpp"

#include "host/account.hpp"
#include "host/facts.hpp"
#include "host/kvm_probe.hpp"
#include "proc/process.hpp"
#include "sched/slurm.hpp"

#include <algorithm>
#include <elf.h>
#include <fstream>
#include <grp.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <vector>

namespace rig::host {

namespace fs = std::filesystem;

bool is_static_elf(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    Elf64_Ehdr header{};
    if (!in.read(reinterpret_cast<char*>(&header), sizeof header) ||
        std::string_view(reinterpret_cast<const char*>(header.e_ident), 4) != ELFMAG ||
        header.e_ident[EI_CLASS] != ELFCLASS64)
        return false;
    for (int i = 0; i < header.e_phnum; ++i) {
        Elf64_Phdr program{};
        in.seekg(static_cast<std::streamoff>(header.e_phoff + i * header.e_phentsize));
        if (!in.read(reinterpret_cast<char*>(&program), sizeof program))
            return false;
        if (program.p_type == PT_INTERP)
            return false;
    }
    return true;
}

namespace {

// `absent` is warn for a program only some scenarios need: a missing one then does not
// fail the doctor of a machine that runs Debian kernels only (the quickstart's).
Check program_check(const std::string& name, const std::string& package, const std::string& why,
                    Status absent = Status::missing) {
    if (auto path = proc::find_program(name))
        return {name, Status::ok, path->string(), package};
    return {name, absent, "not found in PATH: " + why, package};
}

Check qemu_check() {
    Check check{"qemu", Status::missing, "qemu-system-x86_64 not found in PATH", "qemu-system-x86"};
    if (!proc::find_program("qemu-system-x86_64"))
        return check;
    proc::RunOptions options;
    options.timeout = std::chrono::seconds(20);
    auto result = proc::run({"qemu-system-x86_64", "--version"}, options);
    if (!result || result->exit_code != 0) {
        check.detail = "qemu-system-x86_64 --version failed";
        return check;
    }
    std::string version = parse_qemu_version(result->out);
    int major = 0, minor = 0;
    std::sscanf(version.c_str(), "%d.%d", &major, &minor);
    // pvpanic's "-action panic=exit-failure" turns a guest panic into an exit code.
    bool recent = major > 7 || (major == 7 && minor >= 1);
    check.status = recent ? Status::ok : Status::missing;
    check.detail = "version " + version + (recent ? "" : " (7.1 or newer needed for -action)");
    return check;
}

// The probe a run makes: what the doctor says is what a run will choose.
Check accel_check(const fs::path& cache_dir) {
    auto kvm = probe_kvm(cache_dir);
    if (!kvm)
        return {"accelerator", Status::warn, "KVM probe failed: " + kvm.error().message, ""};
    if (*kvm == Kvm::runs_guests)
        return {"accelerator", Status::ok, "a test guest ran under KVM: guests run under KVM", ""};
    std::string detail = std::string(describe(*kvm)) + ": guests run under TCG, slower and noisier";
    // Only a boot's answer is kept; say where, so that a fixed KVM can be probed again.
    if (*kvm == Kvm::cannot_run_guests)
        detail += " (answer kept in " + probe_answer_file(cache_dir).string() + ")";
    return {"accelerator", Status::warn, detail, ""};
}

Check virtiofsd_check() {
    auto daemon = find_virtiofsd();
    if (!daemon)
        return {"virtiofsd", Status::missing,
                "not found (looked at " + virtiofsd_places() + "); needed for fs: virtiofs cells",
                "qemu-system-common"};
    Check check{"virtiofsd", Status::ok, daemon->string(), "qemu-system-common"};
    if (::geteuid() != 0) {
        check.status = Status::warn;
        check.detail += " (the C daemon must run as root)";
    }
    return check;
}

Check busybox_check() {
    for (const char* candidate : {"/bin/busybox", "/usr/bin/busybox"})
        if (fs::exists(candidate)) {
            if (is_static_elf(candidate))
                return {"busybox-static", Status::ok, candidate, "busybox-static"};
            return {"busybox-static", Status::missing,
                    std::string(candidate) + " is dynamically linked; the initramfs needs a "
                                             "static one",
                    "busybox-static"};
        }
    return {"busybox-static", Status::missing, "the guest initramfs is built from it",
            "busybox-static"};
}

Check libvirtd_check() {
    if (!proc::find_program("libvirtd") && !fs::exists("/usr/sbin/libvirtd"))
        return {"libvirtd", Status::warn, "not installed; only needed for backend: libvirt",
                "libvirt-daemon-system"};
    if (fs::exists("/run/libvirt/libvirt-sock") || fs::exists("/var/run/libvirt/libvirt-sock"))
        return {"libvirtd", Status::ok, "running (qemu:///system socket present)",
                "libvirt-daemon-system"};
    return {"libvirtd", Status::warn,
            "installed but not running; start it with scripts/start-libvirtd "
            "(virtlogd -d && libvirtd -d)",
            "libvirt-daemon-system"};
}

// The trap of backend libvirt under qemu:///system: QEMU runs as libvirt-qemu, so a share
// owned by root with mode 0755 is read-only to it ("Permission denied" on write), and a
// results folder under a private home (/root is 0700) cannot be reached at all.
// True when `account` may open `device` for reading and writing, by owner, group or other.
bool user_can_open(const Account& account, const fs::path& device) {
    struct stat info {};
    if (::stat(device.c_str(), &info) != 0)
        return false;
    if (account.uid == info.st_uid)
        return (info.st_mode & (S_IRUSR | S_IWUSR)) == (S_IRUSR | S_IWUSR);
    if ((info.st_mode & (S_IROTH | S_IWOTH)) == (S_IROTH | S_IWOTH))
        return true;
    int count = 64;
    std::vector<gid_t> groups(static_cast<size_t>(count));
    if (::getgrouplist(account.name.c_str(), account.gid, groups.data(), &count) < 0)
        return false;
    groups.resize(static_cast<size_t>(count));
    bool in_group = std::find(groups.begin(), groups.end(), info.st_gid) != groups.end();
    return in_group && (info.st_mode & (S_IRGRP | S_IWGRP)) == (S_IRGRP | S_IWGRP);
}

// Where no udev runs, /dev/kvm can stay root's alone. libvirtd then finds that its QEMU
// user cannot use KVM, drops its capability cache and probes QEMU again before every
// guest: a minute or more per sample under TCG.
Check libvirt_kvm_check() {
    auto account = libvirt_qemu_account();
    if (!account || !fs::exists("/dev/kvm"))
        return {"libvirt /dev/kvm", Status::ok, "no /dev/kvm or no libvirt QEMU user", ""};
    const std::string& user = account->name;
    if (user_can_open(*account, "/dev/kvm"))
        return {"libvirt /dev/kvm", Status::ok, std::string("open to ") + user, ""};
    return {"libvirt /dev/kvm", Status::warn,
            std::string("/dev/kvm is not open to ") + user +
                ": libvirtd re-probes QEMU before every guest; chgrp kvm /dev/kvm && chmod "
                "0660 /dev/kvm, as udev does (scripts/start-libvirtd does it)",
            ""};
}

Check libvirt_share_check(const fs::path& data_dir) {
    auto account = libvirt_qemu_account();
    if (!account)
        return {"libvirt shares", Status::ok, "no libvirt QEMU user on this machine", ""};
    const std::string& user = account->name;
    std::string trap = std::string("under qemu:///system QEMU runs as ") + user +
                       ": a root-owned 0755 share is read-only to it, so rig hands each "
                       "sample's share to " +
                       user + " (chown)";
    for (fs::path dir = fs::absolute(data_dir);; dir = dir.parent_path()) {
        struct stat info {};
        if (::stat(dir.c_str(), &info) == 0 && !(info.st_mode & S_IXOTH))
            return {"libvirt shares", Status::warn,
                    trap + "; but " + dir.string() + " is not searchable by others, so " + user +
                        " cannot reach the results folder: use --db elsewhere or chmod o+x " +
                        dir.string(),
                    ""};
        if (dir == dir.parent_path())
            break;
    }
    return {"libvirt shares", Status::ok, trap + "; the results folder is reachable", ""};
}

// backend slurm: the cluster answers, munge (which every Slurm call rests on) works, and
// the results folder, where the job files, kernels and sample folders of a run go unless
// the scenario names another shared folder, can be written.
Check slurm_check() {
    if (!proc::find_program("sinfo"))
        return {"slurm", Status::warn, "sinfo not installed; only needed for backend slurm",
                "slurm-client"};
    auto summary = sched::cluster_summary();
    if (!summary)
        return {"slurm", Status::warn,
                summary.error().message +
                    "; start a one-node cluster with scripts/start-slurm DIR and export the "
                    "SLURM_CONF it prints",
                "slurm-client"};
    return {"slurm", Status::ok, *summary, "slurm-client"};
}

Check munge_check(const fs::path& data_dir) {
    fs::path scratch = fs::absolute(data_dir);
    while (!fs::exists(scratch) && scratch != scratch.parent_path())
        scratch = scratch.parent_path();
    auto round_trip = sched::munge_round_trip(scratch);
    if (!round_trip)
        return {"munge", Status::warn, round_trip.error().message + " (needed for backend slurm)",
                "munge"};
    return {"munge", Status::ok, *round_trip, "munge"};
}

Check shared_folder_check(const fs::path& data_dir) {
    fs::path probe = fs::absolute(data_dir);
    while (!fs::exists(probe) && probe != probe.parent_path())
        probe = probe.parent_path();
    if (::access(probe.c_str(), W_OK | X_OK) != 0)
        return {"slurm shared folder", Status::warn,
                probe.string() + " is not writable: backend slurm keeps job files, kernels and "
                                 "samples there (or under the scenario's slurm.shared)",
                ""};
    return {"slurm shared folder", Status::ok,
            probe.string() + " is writable; on a cluster every node must see it at this path", ""};
}

Check disk_check(const fs::path& data_dir) {
    fs::path probe = fs::absolute(data_dir);
    while (!fs::exists(probe) && probe.has_parent_path() && probe != probe.parent_path())
        probe = probe.parent_path();
    struct statvfs stats {};
    if (::statvfs(probe.c_str(), &stats) != 0)
        return {"disk", Status::warn, "cannot stat " + probe.string(), ""};
    uint64_t free_gib = static_cast<uint64_t>(stats.f_bavail) * stats.f_frsize >> 30;
    std::string detail = std::to_string(free_gib) + " GiB free at " + probe.string();
    // A kernel build folder with modules takes a few GiB; the artifact cache grows.
    if (free_gib >= 10)
        return {"disk", Status::ok, detail, ""};
    return {"disk", free_gib >= 2 ? Status::warn : Status::missing,
            detail + " (kernel builds want 10 GiB)", ""};
}

// Which user QEMU runs as (README, "Security"): rig-qemu when rig is root, rig's own user
// otherwise, where virtiofs cells cannot run.
Check mode_check() {
    auto account = qemu_account();
    if (!account)
        return {"mode", Status::missing, account.error().message, "adduser"};
    if (*account)
        return {"mode", Status::ok,
                "root: QEMU runs as " + (*account)->name + " (uid " +
                    std::to_string((*account)->uid) + "), sandboxed",
                ""};
    auto self = ::geteuid();
    return {"mode", Status::ok,
            "normal user (uid " + std::to_string(self) +
                "): QEMU runs as this user; fs: virtiofs cells need root (virtiofsd)",
            ""};
}

} // namespace

std::vector<Check> run_checks(const fs::path& data_dir, const fs::path& cache_dir) {
    return {
        mode_check(),
        qemu_check(),
        accel_check(cache_dir),
        virtiofsd_check(),
        busybox_check(),
        program_check("cpio", "cpio", "packs the guest initramfs"),
        program_check("dpkg-deb", "dpkg", "unpacks Debian kernel packages"),
        program_check("apt-get", "apt", "fetches Debian kernel packages"),
        program_check("git", "git", "only needed for git kernels and bisects", Status::warn),
        program_check("make", "make", "kernel builds and compile workloads"),
        program_check("gcc", "gcc", "kernel builds and compile workloads"),
        libvirtd_check(),
        libvirt_share_check(data_dir),
        libvirt_kvm_check(),
        slurm_check(),
        munge_check(data_dir),
        shared_folder_check(data_dir),
        disk_check(data_dir),
    };
}

} // namespace rig::host
