// SPDX-License-Identifier: MIT
// The KVM probe: a boot sector booted under KVM, its answer kept per host kernel.
#include "host/kvm_probe.hpp"

#include "host/account.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace rig::host {

namespace fs = std::filesystem;

std::string_view describe(Kvm kvm) {
    switch (kvm) {
    case Kvm::runs_guests:
        return "KVM runs guests";
    case Kvm::no_device:
        return "no /dev/kvm";
    case Kvm::not_read_write:
        return "/dev/kvm is not read-write for you";
    case Kvm::cannot_run_guests:
        return "/dev/kvm opens but cannot run a guest";
    }
    return "?";
}

std::string probe_boot_sector() {
    // mov al, 0x31; out 0xf4, al; hlt. Real mode, where SeaBIOS jumps to 0x7c00.
    std::string sector{'\xb0', '\x31', '\xe6', '\xf4', '\xf4'};
    sector.resize(510, '\0');
    sector += "\x55\xaa"; // the signature without which SeaBIOS does not boot the disk
    return sector;
}

std::vector<std::string> probe_argv(core::Accelerator accel, const fs::path& disk) {
    // file.locking=off: probes of several rigs at once share the disk, which none writes.
    return {"qemu-system-x86_64",
            "-accel",
            std::string(core::to_string(accel)),
            "-machine",
            "pc",
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
            "-device",
            "isa-debug-exit,iobase=0xf4,iosize=0x04",
            "-drive",
            "file=" + disk.string() + ",format=raw,if=ide,file.locking=off"};
}

ProbeBoot probe_outcome(const proc::RunResult& result) {
    if (result.timed_out)
        return ProbeBoot::guest_hung;
    return result.exit_code == k_probe_guest_ran ? ProbeBoot::guest_ran : ProbeBoot::guest_failed;
}

Expected<ProbeBoot> boot_probe_guest(core::Accelerator accel, const fs::path& folder,
                                     const QemuRunner& run) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + folder.string() + ": " + ec.message());
    fs::path disk = folder / "boot-sector.img";
    RIG_TRY(util::write_file_atomically(disk, probe_boot_sector(), util::Sync::skip));
    proc::RunOptions options;
    options.timeout = k_probe_timeout;
    // As the user guests' QEMU runs as (vm/qemu_user.hpp): whether KVM runs a guest is
    // that user's question (its group kvm, /dev/kvm's mode), not root's.
    fs::path seen = disk;
    if (auto account = RIG_TRY(qemu_account())) {
        // The guest never writes it, but IDE has no read-only disks: the copy is the user's.
        if (::chown(disk.c_str(), account->uid, account->gid) != 0)
            return fail(ErrorKind::infra, "cannot give " + disk.string() + " to " + account->name +
                                              ": " + std::strerror(errno));
        seen = fs::path(proc::k_bind_root) / disk.filename();
        options.confinement.user = credentials(*account);
        options.confinement.binds = {{disk, seen, false}};
    }
    proc::RunResult result = RIG_TRY(run(probe_argv(accel, seen), options));
    return probe_outcome(result);
}

fs::path probe_answer_file(const fs::path& cache_dir, const std::string& hostname,
                           const std::string& kernel_release) {
    std::string name = hostname + "_" + kernel_release;
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
            c = '_';
    return cache_dir / "kvm-probe" / name;
}

fs::path probe_answer_file(const fs::path& cache_dir) {
    utsname names{};
    ::uname(&names); // cannot fail with a valid buffer
    return probe_answer_file(cache_dir, names.nodename, names.release);
}

Expected<ProbeBoot> kvm_boot_answer(const fs::path& answer_file, const QemuRunner& run) {
    if (fs::exists(answer_file)) {
        std::string kept = util::read_file(answer_file);
        // Anything else (a file cut short, written by hand) is probed again and replaced.
        if (auto accel = core::parse_accelerator(util::trim(kept)))
            return *accel == core::Accelerator::kvm ? ProbeBoot::guest_ran
                                                    : ProbeBoot::guest_failed;
    }
    fs::path folder = answer_file.parent_path();
    using Clock = std::chrono::steady_clock;
    auto started = Clock::now();
    ProbeBoot boot = RIG_TRY(boot_probe_guest(core::Accelerator::kvm, folder, run));
    auto kvm_took = Clock::now() - started;
    started = Clock::now();
    ProbeBoot tcg = RIG_TRY(boot_probe_guest(core::Accelerator::tcg, folder, run));
    auto tcg_took = Clock::now() - started;
    // A hung KVM and a host too loaded to boot anything in time look alike; only the first
    // is worth keeping for the life of the host's kernel.
    if (boot == ProbeBoot::guest_hung && tcg != ProbeBoot::guest_ran)
        return boot;
    // A KVM that boots the sector slower than emulation does (an emulated or badly nested
    // /dev/kvm: seconds, where TCG needs a fifth of one) runs no guest worth having; a
    // real one needs less than TCG, whatever the load.
    if (boot == ProbeBoot::guest_ran && tcg == ProbeBoot::guest_ran &&
        kvm_took > tcg_took + std::chrono::milliseconds(500))
        boot = ProbeBoot::guest_failed;
    core::Accelerator answer =
        boot == ProbeBoot::guest_ran ? core::Accelerator::kvm : core::Accelerator::tcg;
    RIG_TRY(util::write_file_atomically(answer_file, std::string(core::to_string(answer)) + "\n"));
    return boot;
}

Expected<Kvm> probe_kvm(const fs::path& cache_dir, const QemuRunner& run) {
    // Cheap answers first, and never kept: a device node or its permissions change
    // without a new kernel.
    if (!fs::exists("/dev/kvm"))
        return Kvm::no_device;
    int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return Kvm::not_read_write;
    ::close(fd);
    ProbeBoot boot = RIG_TRY(kvm_boot_answer(probe_answer_file(cache_dir), run));
    return boot == ProbeBoot::guest_ran ? Kvm::runs_guests : Kvm::cannot_run_guests;
}

Expected<core::Accelerator> choose_accel(core::Accel requested, Kvm kvm) {
    switch (requested) {
    case core::Accel::tcg:
        return core::Accelerator::tcg;
    case core::Accel::auto_detect:
        return kvm == Kvm::runs_guests ? core::Accelerator::kvm : core::Accelerator::tcg;
    case core::Accel::kvm:
        break;
    }
    if (kvm != Kvm::runs_guests)
        return fail(ErrorKind::infra, "guest.accel is kvm but " + std::string(describe(kvm)));
    return core::Accelerator::kvm;
}

Expected<core::Accelerator> choose_accel(core::Accel requested, const fs::path& cache_dir) {
    // No boot for a scenario that asked for TCG: its guests do not care what KVM does.
    if (requested == core::Accel::tcg)
        return core::Accelerator::tcg;
    return choose_accel(requested, RIG_TRY(probe_kvm(cache_dir)));
}

} // namespace rig::host
