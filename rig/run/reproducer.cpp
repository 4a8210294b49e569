// SPDX-License-Identifier: MIT
// A sample's guest without rig: its recipe, and the tarball made of it.
#include "run/reproducer.hpp"

#include "guest/job.hpp"
#include "host/facts.hpp"
#include "proc/process.hpp"
#include "run/sample_launch.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"
#include "vm/qemu.hpp"

#include <map>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

// The kernel keeps its kind's name: a bzImage, or the ELF vmlinux of a git kernel built
// for PVH (QEMU's -kernel boots either).
constexpr const char* k_bzimage_name = "bzImage";
constexpr const char* k_vmlinux_name = "vmlinux";
constexpr const char* k_initrd_name = "initrd.cpio";
constexpr const char* k_etc_name = "etc";
constexpr const char* k_work_name = "work";
constexpr const char* k_marks_name = "marks";
// The coherency probe's acknowledgements: an empty folder, as no host makes the probe's
// changes here (each file waits its 10 s and is reported unprobed).
constexpr const char* k_acks_name = "acks";

// A virtiofs share's socket in the reproducer's folder.
fs::path socket_of(const vm::Share& share) {
    return "virtiofs-" + share.tag + ".sock";
}

// `argv` as one command of the script. A `source=PATH` word with `source` as PATH, a
// name of the reproducer's folder, becomes absolute there: virtiofsd resolves its source
// inside its own sandbox, where a relative one serves an empty folder.
std::string script_line(const std::vector<std::string>& argv, const fs::path& source = {}) {
    const std::string relative = "source=" + source.string();
    std::string line;
    for (const std::string& argument : argv)
        line += (line.empty() ? "" : " \\\n    ") + (!source.empty() && argument == relative
                                                         ? "\"source=$PWD/" + source.string() + "\""
                                                         : util::shell_word(argument));
    return line;
}

// "NAME\tPATH" lines: where each host file the reproducer copies was (the initramfs is the
// sample's own).
std::map<std::string, fs::path> read_files(const fs::path& file) {
    std::map<std::string, fs::path> files;
    util::for_each_line(util::read_file(file), [&](std::string_view line) {
        size_t tab = line.find('\t');
        if (tab != std::string_view::npos)
            files[std::string(line.substr(0, tab))] = fs::path(line.substr(tab + 1));
    });
    return files;
}

std::string readme(const ReproducerParts& parts, const std::string& name) {
    return parts.about + (parts.about.empty() ? "" : "\n") +
           "To boot it without rig, as root or as a user who may run QEMU:\n"
           "\n"
           "    tar xf " +
           name + std::string(k_tarball_suffix) + " && " + name +
           "/run.sh\n"
           "\n"
           "run.sh boots the kernel (bzImage, or vmlinux for a kernel rig built) with\n"
           "initrd.cpio, which holds rig's guest agent (init) and\n"
           "the workload, over a fresh copy of work.orig/ as the work share. The guest sees\n"
           "this host's /usr (its compiler and libraries) and etc/ (what a compile needs of\n"
           "/etc) read-only: a Debian 12 host gives it what rig's guest had. The kernel's\n"
           "console goes to console.log, the agent's records (phase times, the workload's\n"
           "output and exit status, its kernel log lines) to channel.log; QEMU exits with 0\n"
           "when the guest powers off and with 1 when it panics. config is the kernel's\n"
           ".config. Under KVM, change accel=tcg to accel=kvm in run.sh.\n";
}

} // namespace

std::string reproducer_folder(const std::string& file_name) {
    const size_t suffix = k_tarball_suffix.size();
    if (file_name.size() > suffix &&
        file_name.compare(file_name.size() - suffix, suffix, k_tarball_suffix) == 0)
        return file_name.substr(0, file_name.size() - suffix);
    return file_name;
}

std::string reproducer_kernel_name(const fs::path& image) {
    return image.filename() == k_vmlinux_name ? k_vmlinux_name : k_bzimage_name;
}

vm::GuestSpec reproducer_spec(const vm::GuestSpec& spec, const std::string& kernel) {
    vm::GuestSpec seen = spec;
    seen.name = "rig-reproducer";
    seen.kernel = kernel;
    seen.initrd = k_initrd_name;
    seen.console_log = "console.log";
    seen.channel_log = "channel.log";
    seen.runtime_dir = ".";
    seen.protocol_trace.clear();
    seen.host_cpus = {};
    if (!spec.scratch_disk.empty())
        seen.scratch_disk = "scratch.img";
    for (vm::Share& share : seen.shares) {
        share.log_requests = false;
        if (share.tag == guest::k_etc_tag)
            share.path = k_etc_name;
        else if (share.tag == guest::k_work_tag)
            share.path = k_work_name;
        else if (share.tag == guest::k_mark_tag)
            share.path = k_marks_name;
        else if (share.tag == guest::k_ack_tag)
            share.path = k_acks_name;
    }
    return seen;
}

std::string reproducer_script(const vm::GuestSpec& spec, const std::string& kernel) {
    const vm::GuestSpec seen = reproducer_spec(spec, kernel);
    std::string script = "#!/bin/sh\n"
                         "# rig's sample without rig: README says what each file is.\n"
                         "set -eu\n"
                         "cd \"$(dirname \"$0\")\"\n"
                         "rm -rf work marks acks console.log channel.log\n"
                         "cp -a work.orig work\n"
                         "mkdir marks acks\n";
    if (!spec.scratch_disk.empty()) {
        std::error_code ec;
        const uintmax_t bytes = fs::file_size(spec.scratch_disk, ec);
        script +=
            "rm -f scratch.img\ntruncate -s " + std::to_string(ec ? 0 : bytes) + " scratch.img\n";
    }
    std::vector<fs::path> sockets;
    for (const vm::Share& share : seen.shares) {
        if (share.kind != vm::ShareKind::virtiofs)
            continue;
        const fs::path socket = socket_of(share);
        sockets.push_back(socket);
        const fs::path daemon = host::find_virtiofsd().value_or("virtiofsd");
        script += "# virtiofsd serves the work share (as root, as rig runs it)\n" +
                  script_line(vm::virtiofsd_argv(daemon, share, socket), share.path) + " &\n" +
                  "trap 'kill $! 2>/dev/null || true' EXIT\n" + "while [ ! -S " +
                  util::shell_word(socket.string()) + " ]; do sleep 0.1; done\n";
    }
    // With a daemon to stop at the end the shell stays; else QEMU takes its place.
    script += (sockets.empty() ? "exec " : "") + script_line(vm::qemu_argv(seen, sockets)) + "\n";
    return script;
}

Expected<void> write_recipe(const vm::GuestSpec& spec, const fs::path& image, const fs::path& dir) {
    const std::string kernel = reproducer_kernel_name(image);
    std::string files;
    if (!image.empty())
        files += kernel + "\t" + image.string() + "\n";
    for (const vm::Share& share : spec.shares)
        if (share.tag == guest::k_etc_tag && !share.path.empty())
            files += std::string(k_etc_name) + "\t" + share.path.string() + "\n";
    RIG_TRY(util::write_file_atomically(dir / k_recipe_files, files));
    return util::write_file_atomically(dir / k_recipe_script, reproducer_script(spec, kernel));
}

Expected<void> write_reproducer(const ReproducerParts& parts, const fs::path& tarball) {
    const fs::path script = parts.sample_dir / k_recipe_script;
    std::error_code ec;
    if (!fs::is_regular_file(script, ec) ||
        !fs::is_regular_file(parts.sample_dir / k_recipe_files, ec))
        return fail(ErrorKind::infra, "the sample folder " + parts.sample_dir.string() +
                                          " keeps no reproducer recipe (" + k_recipe_script + ")");
    const std::string name = reproducer_folder(tarball.filename().string());
    const fs::path staging = tarball.parent_path() / ("." + name + ".tmp");
    const fs::path top = staging / name;
    fs::remove_all(staging, ec);
    fs::create_directories(top, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot make " + top.string() + ": " + ec.message());
    auto copy = [&](const fs::path& from, const fs::path& to) -> Expected<void> {
        fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
        if (ec)
            return fail(ErrorKind::infra, "cannot copy " + from.string() + " into the reproducer " +
                                              tarball.string() + ": " + ec.message());
        return {};
    };
    RIG_TRY(copy(script, top / "run.sh"));
    fs::permissions(top / "run.sh", fs::perms::owner_all | fs::perms::group_read |
                                        fs::perms::group_exec | fs::perms::others_read |
                                        fs::perms::others_exec);
    RIG_TRY(copy(parts.sample_dir / k_initrd_name, top / k_initrd_name));
    const auto files = read_files(parts.sample_dir / k_recipe_files);
    for (const auto& [file, from] : files)
        RIG_TRY(copy(from, top / file));
    RIG_TRY(prepare_share(parts.workload, top / "work.orig"));
    if (!parts.kernel_config.empty())
        RIG_TRY(util::write_file_atomically(top / "config", parts.kernel_config));
    else
        for (const char* kernel_name : {k_bzimage_name, k_vmlinux_name})
            if (auto kernel = files.find(kernel_name); kernel != files.end()) {
                // A kernel rig built keeps its .config beside it in the cache
                // (kernel/build.cpp).
                const fs::path config = kernel->second.parent_path() / "config";
                if (fs::is_regular_file(config, ec))
                    RIG_TRY(copy(config, top / "config"));
            }
    RIG_TRY(util::write_file_atomically(top / "README", readme(parts, name)));
    // One order, owner and time for every entry: the same reproducer packs the same way.
    const fs::path packed = staging / (name + std::string(k_tarball_suffix));
    proc::RunResult tar = RIG_TRY(proc::run(
        {"tar", "--create", "--gzip", "--file", packed.string(), "--directory", staging.string(),
         "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@1577836800", name}));
    if (tar.exit_code != 0)
        return fail(ErrorKind::infra, "tar could not pack " + tarball.string() + ": " + tar.err);
    fs::rename(packed, tarball, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot write " + tarball.string() + ": " + ec.message());
    fs::remove_all(staging, ec);
    return {};
}

} // namespace rig::run
