// SPDX-License-Identifier: MIT
// The job archive.
#include "guest/job.hpp"

#include "core/path_class.hpp"
#include "core/profile.hpp"
#include "guest/cpio.hpp"
#include "guest/initramfs.hpp"
#include "util/strings.hpp"

namespace rig::guest {

namespace {

// NAME:VALUE words: the agent splits at the first colon and checks each side again.
Expected<std::string> pairs(const std::string& what,
                            const std::vector<std::pair<std::string, std::string>>& entries) {
    constexpr std::string_view k_name =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    constexpr std::string_view k_value =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-";
    std::vector<std::string> words;
    for (const auto& [name, value] : entries) {
        if (name.empty() || name.find_first_not_of(k_name) != std::string::npos || value.empty() ||
            value.find_first_not_of(k_value) != std::string::npos ||
            value.find("..") != std::string::npos)
            return fail(ErrorKind::config, what + " '" + name + ":" + value +
                                               "' is not two plain words (letters, digits, "
                                               "_ ./+- and no '..')");
        words.push_back(name + ":" + value);
    }
    return util::join(words, " ");
}

} // namespace

bool wants_ack_share(const Job& job) {
    const bool server_hashes = !job.check_after.empty() && !job.outputs.empty();
    return (!job.coherency.empty() || server_hashes) &&
           job.fs->mount != core::GuestMount::guest_fuse;
}

bool is_root_tag(std::string_view tag) {
    return tag == k_usr_tag || tag == k_etc_tag;
}

Expected<std::string> job_file(const Job& job) {
    std::string text;
    auto add = [&](const std::string& key, const std::string& value) -> Expected<void> {
        if (value.find('\n') != std::string::npos || value.find('\0') != std::string::npos)
            return fail(ErrorKind::config, "job value for " + key + " has a newline");
        text += key + "=" + value + "\n";
        return {};
    };
    RIG_TRY(add("RUN_ID", job.run_label));
    if (!job.root_shares.empty())
        RIG_TRY(add("ROOT_SHARES", RIG_TRY(pairs("root share", job.root_shares))));
    if (!job.root_links.empty())
        RIG_TRY(add("ROOT_LINKS", RIG_TRY(pairs("root link", job.root_links))));
    const core::Filesystem& fs = *job.fs;
    RIG_TRY(add("MODULES", module_list_path(fs, job.machine)));
    // The row's recipe (core/fs.hpp), which guests/init follows.
    RIG_TRY(add("WORK_MOUNT", fs.mount == core::GuestMount::guest_fuse ? "fuse-daemon" : "kernel"));
    RIG_TRY(add("WORK_FSTYPE", std::string(fs.fstype)));
    RIG_TRY(add("WORK_TAG", k_work_tag));
    std::string options = job.work_options;
    if (fs.names_share)
        options += (options.empty() ? "" : ",") + std::string("aname=") + k_work_tag;
    RIG_TRY(add("WORK_OPTS", options));
    RIG_TRY(add("WORK_MOUNTPOINT", k_work_mount_point));
    RIG_TRY(add("WORKLOAD_TIMEOUT", std::to_string(job.workload_timeout.count())));
    if (job.mark_phases) {
        RIG_TRY(add("MARK_TAG", k_mark_tag));
        if (fs.marks_in_share)
            RIG_TRY(add("MARK_WORK", "1"));
    }
    if (job.scratch)
        RIG_TRY(add("SCRATCH_MODULES", std::string(k_scratch_module_list)));
    if (!job.profile_globs.empty()) {
        // The agent splits on blanks and checks each glob's characters again.
        for (const std::string& glob : job.profile_globs)
            if (!core::profile_entry_error(glob).empty())
                return fail(ErrorKind::config, "profile glob '" + glob + "' is not one glob");
        RIG_TRY(add("PROFILE", util::join(job.profile_globs, " ")));
        RIG_TRY(add("PROFILE_MAX", std::to_string(core::k_max_profiled_functions)));
    }
    if (!job.outputs.empty()) {
        // The agent expands them in its shell, word by word, and checks each again.
        for (const std::string& glob : job.outputs)
            if (!core::is_output_glob(glob))
                return fail(ErrorKind::config, "outputs glob '" + glob + "' is not one glob");
        RIG_TRY(add("OUTPUTS", util::join(job.outputs, " ")));
    }
    if (!job.coherency.empty()) {
        // Words of the agent's loop: checked here, and again there.
        for (const std::string& entry : util::split(job.coherency, ' '))
            if (entry.empty() ||
                entry.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:") !=
                    std::string::npos)
                return fail(ErrorKind::config, "coherency entry '" + entry + "' is not one word");
        RIG_TRY(add("COHERENCY", job.coherency));
        RIG_TRY(add("COHERENCY_WINDOW_MS", std::to_string(job.coherency_window.count())));
    }
    if (!job.check_after.empty()) {
        for (const std::string& phase : job.check_after)
            if (!core::is_phase_name(phase))
                return fail(ErrorKind::config, "check_after '" + phase + "' is not a phase name");
        RIG_TRY(add("CHECK_AFTER", util::join(job.check_after, " ")));
    }
    if (wants_ack_share(job)) {
        RIG_TRY(add("ACK_TAG", k_ack_tag));
        RIG_TRY(add("ACK_WAIT_MS", std::to_string(k_ack_wait.count())));
    }
    if (!job.module.empty()) {
        RIG_TRY(add("MODULE", std::string("/") + k_module_archive_path));
        // Kbuild names the .ko after the module, which rmmod takes.
        RIG_TRY(add("MODULE_NAME", job.module.stem().string()));
        std::vector<std::string> params;
        for (const auto& [name, value] : job.module_params) {
            if (name.empty() || value.empty() || name.find_first_of(" =\n") != std::string::npos ||
                value.find_first_of(" \n") != std::string::npos)
                return fail(ErrorKind::config,
                            "module parameter '" + name + "=" + value + "' is not one token");
            params.push_back(name + "=" + value);
        }
        RIG_TRY(add("MODULE_PARAMS", util::join(params, " ")));
    }
    if (!job.phase_scripts.empty()) {
        std::vector<std::string> names;
        // A name becomes a file name in the guest and a word in the agent's loop.
        for (const auto& [name, script] : job.phase_scripts) {
            if (!core::is_phase_name(name))
                return fail(ErrorKind::config, "phase name '" + name + "' is not a plain word");
            names.push_back(name);
        }
        RIG_TRY(add("PHASES", util::join(names, " ")));
    }
    if (fs.mount == core::GuestMount::guest_fuse) {
        for (const std::string& arg : job.fuse_args)
            if (arg.empty() || arg.find(' ') != std::string::npos)
                return fail(ErrorKind::config, "fuse option '" + arg + "' is not one token");
        RIG_TRY(add("FUSE_DAEMON", k_fuse_daemon_path));
        RIG_TRY(add("FUSE_ARGS", util::join(job.fuse_args, " ")));
        RIG_TRY(add("PATHS_TOP", std::to_string(core::k_path_classes_per_request)));
    }
    return text;
}

Expected<std::string> job_archive(const Job& job) {
    CpioWriter cpio;
    cpio.add_directory("etc");
    cpio.add_directory("etc/rig");
    cpio.add_file("etc/rig/job", RIG_TRY(job_file(job)));
    cpio.add_file("etc/rig/workload.sh", job.workload_script + "\n");
    for (const auto& [name, script] : job.phase_scripts)
        cpio.add_file("etc/rig/phase-" + name + ".sh", script + "\n");
    if (job.fs->mount == core::GuestMount::guest_fuse)
        RIG_TRY(cpio.add_file_from(k_fuse_daemon_archive_path, job.fuse_daemon, 0755));
    if (!job.module.empty())
        RIG_TRY(cpio.add_file_from(k_module_archive_path, job.module, 0644));
    return cpio.finish();
}

} // namespace rig::guest
