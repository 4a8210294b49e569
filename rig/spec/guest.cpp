// SPDX-License-Identifier: MIT
// The `guest:` and `timeouts:` keys read into core types.
#include "spec/guest.hpp"

#include "core/axis.hpp"
#include "core/profile.hpp"
#include "spec/keys.hpp"
#include "spec/reader_context.hpp"
#include "spec/yaml_reader.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <filesystem>

namespace rig::spec {

using core::Located;

namespace {

// Below this a guest kernel plus the build workload does not fit.
constexpr uint64_t k_min_memory_mib = 128;

// The scratch disk is a sparse file made per sample: whole MiB keep it a whole number of
// sectors, and the bound keeps a typo (a bare number is bytes; 256T) off the host's disk.
constexpr uint64_t k_max_scratch_mib = 1ULL << 20; // 1 TiB

// Where the guest has folders of its own, or its root's shares: a host path there would be
// hidden, or could not be mounted.
constexpr std::string_view k_guest_owned[] = {"/usr", "/etc", "/proc", "/sys",
                                              "/dev", "/run", "/tmp",  "/var/tmp"};

// An absolute, plain folder path of the host that is not the root nor inside what the
// guest owns; the agent checks the same characters again.
Expected<std::vector<std::string>> read_host_paths(const Context& context, const Entry& key) {
    std::vector<std::string> paths;
    std::vector<Located> given = RIG_TRY(read_scalars(context, key.value, key.path, Shape::list));
    // Each is a share of its own, and QEMU's binds are counted (vm/qemu_user.hpp).
    constexpr size_t k_most = 8;
    if (given.size() > k_most)
        return error_at(context, given[k_most],
                        "at most " + std::to_string(k_most) + " host paths");
    for (const Located& path : given) {
        constexpr std::string_view k_chars =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-";
        const std::string& text = path.value;
        if (text.size() < 2 || text.front() != '/' || text.back() == '/' ||
            text.find_first_not_of(k_chars) != std::string::npos ||
            text.find("//") != std::string::npos || text.find("/.") != std::string::npos)
            return error_at(context, path,
                            "expected an absolute folder path of letters, digits and _ . / + - "
                            "(no '/.', no trailing '/'), got '" +
                                text + "'");
        for (std::string_view owned : k_guest_owned)
            if (text == owned || text.rfind(std::string(owned) + "/", 0) == 0)
                return error_at(context, path,
                                "'" + text + "' is inside " + std::string(owned) +
                                    ", which the guest has of its own (README, \"Security\")");
        std::error_code ec;
        if (!std::filesystem::is_directory(text, ec))
            return error_at(context, path, "no folder " + text + " on this host");
        paths.push_back(text);
    }
    return paths;
}

// Set names (9p, fuse, netfs, ...) and function globs, each checked as the agent will.
Expected<std::vector<std::string>> read_profile(const Context& context, const Entry& key) {
    std::vector<std::string> profile;
    for (const Located& entry : RIG_TRY(read_scalars(context, key.value, key.path, Shape::list))) {
        if (std::string wrong = core::profile_entry_error(entry.value); !wrong.empty())
            return error_at(context, entry,
                            wrong + " or a set (" + util::join(core::profile_set_names(), ", ") +
                                "), got '" + entry.value + "'");
        profile.push_back(entry.value);
    }
    if (profile.empty())
        return error_at(context, key.value, key.path, "expected at least one set or function glob");
    return profile;
}

} // namespace

Expected<core::Guest> read_guest(const Context& context, const Entry& entry) {
    core::Guest guest;
    for (const Entry& key : RIG_TRY(read_map(context, entry.value, entry.path, &k_guest_keys))) {
        if (key.key == "memory") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a size"));
            auto bytes = util::parse_size(text.value);
            if (!bytes)
                return error_at(context, text,
                                "expected a size such as 1G or 512M, got '" + text.value + "'");
            constexpr uint64_t k_mib = 1ULL << 20;
            if (*bytes % k_mib != 0)
                return error_at(context, text,
                                "memory must be a whole number of MiB, got '" + text.value +
                                    "' (a bare number is bytes)");
            if (*bytes / k_mib < k_min_memory_mib)
                return error_at(context, text,
                                "memory must be at least " + std::to_string(k_min_memory_mib) +
                                    "M, got '" + text.value + "'");
            guest.memory_mib = *bytes / k_mib;
        } else if (key.key == "cpus") {
            guest.cpus =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 1, 64)));
        } else if (key.key == "count_9p") {
            guest.count_9p = RIG_TRY(read_boolean(context, key.value, key.path));
        } else if (key.key == "scratch") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a size"));
            auto bytes = util::parse_size(text.value);
            constexpr uint64_t k_mib = 1ULL << 20;
            if (!bytes || *bytes == 0)
                return error_at(context, text,
                                "expected a disk size such as 256M or 1G, got '" + text.value +
                                    "'");
            if (*bytes % k_mib != 0)
                return error_at(context, text,
                                "scratch must be a whole number of MiB, got '" + text.value +
                                    "' (a bare number is bytes)");
            if (*bytes / k_mib > k_max_scratch_mib)
                return error_at(context, text,
                                "scratch must be at most 1T (a sparse file per sample), got '" +
                                    text.value + "'");
            guest.scratch_bytes = *bytes;
        } else if (key.key == "share_limit") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a size"));
            auto bytes = util::parse_size(text.value);
            constexpr uint64_t k_mib = 1ULL << 20;
            if (!bytes || *bytes < k_mib || *bytes % k_mib != 0)
                return error_at(context, text,
                                "expected a whole number of MiB, at least 1M, such as 512M or "
                                "8G, got '" +
                                    text.value + "'");
            guest.share_limit = *bytes;
        } else if (key.key == "host_paths") {
            guest.host_paths = RIG_TRY(read_host_paths(context, key));
        } else if (key.key == "profile") {
            guest.profile = RIG_TRY(read_profile(context, key));
        } else if (key.key == "machine") {
            Located machine = RIG_TRY(read_scalar(context, key.value, key.path, "a machine"));
            if (machine.value == "q35")
                guest.machine = core::Machine::q35;
            else if (machine.value != "auto")
                return error_at(context, machine,
                                unknown("machine", machine.value, {"auto", "q35"}));
        } else {
            Located accel = RIG_TRY(read_scalar(context, key.value, key.path, "an accelerator"));
            std::optional<core::Accel> requested = core::parse_accel(accel.value);
            if (!requested)
                return error_at(context, accel, unknown("accel", accel.value, core::accel_words()));
            guest.accel = *requested;
        }
    }
    return guest;
}

Expected<core::Timeouts> read_timeouts(const Context& context, const Entry& entry) {
    core::Timeouts timeouts;
    for (const Entry& key : RIG_TRY(read_map(context, entry.value, entry.path, &k_timeout_keys))) {
        Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a duration"));
        auto duration = std::optional(RIG_TRY(duration_of(context, text, "90s, 2m or 1h30m")));
        if (key.key == "boot")
            timeouts.boot = *duration;
        else if (key.key == "workload")
            timeouts.workload = *duration;
        else
            timeouts.silence = *duration;
    }
    return timeouts;
}
} // namespace rig::spec
