// SPDX-License-Identifier: MIT
// The `guest:` and `timeouts:` keys read into core types.
#include "spec/guest.hpp"

#include "core/axis.hpp"
#include "spec/reader_context.hpp"
#include "util/units.hpp"

namespace rig::spec {

using core::Located;

namespace {

const std::vector<std::string> k_guest_keys{"memory", "cpus", "accel", "count_9p", "scratch"};
const std::vector<std::string> k_timeout_keys{"boot", "workload", "silence"};

// Below this a guest kernel plus the build workload does not fit.
constexpr uint64_t k_min_memory_mib = 128;

// The scratch disk is a sparse file made per sample: whole MiB keep it a whole number of
// sectors, and the bound keeps a typo (a bare number is bytes; 256T) off the host's disk.
constexpr uint64_t k_max_scratch_mib = 1ULL << 20; // 1 TiB

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
        auto duration = util::parse_duration(text.value);
        if (!duration)
            return error_at(context, text,
                            "expected a duration such as 90s, 2m or 1h30m, got '" + text.value +
                                "'");
        if (duration->count() <= 0)
            return error_at(context, text, "must be longer than 0, got '" + text.value + "'");
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
