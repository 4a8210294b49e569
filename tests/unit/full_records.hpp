// SPDX-License-Identifier: MIT
// Records with every field set to a value of its own, for round trips that must keep all.
#pragma once

#include "core/sample.hpp"

#include <gtest/gtest.h>
#include <string>
#include <type_traits>

namespace rig::test {

// Each field differs from its default and from the others of its type, so that a codec
// that drops a field, or swaps two, fails the comparison. A field added to core::Sample
// belongs here too; every_field_set below says which of the list's fields it lacks.
inline core::Sample full_sample() {
    core::Sample sample;
    sample.cell_id = "0123456789ab";
    sample.repetition = 2;
    sample.outcome = core::Outcome::errors;
    sample.accel = "tcg";
    sample.machine = "microvm";
    sample.cpus = "2-3";
    sample.kernel_artifact = "deadbeefdeadbeef";
    sample.guest_seconds = 1.25;
    sample.wall_seconds = 1.5;
    sample.total_seconds = 20.125;
    sample.qemu_cpu_seconds = 3.5;
    sample.helper_cpu_seconds = 0.25;
    sample.host_cpu_seconds = 4;
    sample.host_cpu_percent = 50.5;
    sample.mount_requested = "trans=virtio,cache=loose";
    sample.mount_negotiated = "9p rw,cache=loose";
    sample.msize_negotiated = 512000;
    sample.cache_negotiated = "loose";
    sample.exit_status = 3;
    sample.error_count = 4;
    sample.warning_count = 5;
    sample.evidence = "workload output (tail):\n\"quoted\" \t and a NUL-free tail\n";
    sample.started_at = "2026-01-01T00:00:00Z";
    sample.outputs = std::string(64, 'a') + "  prog\n";
    sample.lines = {{core::Severity::error, "workload", "a.c:1: error: x", "a.c:N: error: x"},
                    {core::Severity::warning, "console", "WARNING: y", "WARNING: y"}};
    sample.metrics = {{"9p.work.getattr", 1234, "requests"}, {"noop/seconds", 0.5, "s"}};
    return sample;
}

// The fields of the list that `record` leaves at their defaults, comma-separated.
template <class Record> std::string fields_left_default(const Record& record) {
    const Record defaults{};
    std::string out;
    fields(record, [&](const char* name, const auto& member) {
        fields(defaults, [&](const char* other, const auto& default_member) {
            if constexpr (std::is_same_v<decltype(member), decltype(default_member)>)
                if (std::string(name) == other && member == default_member)
                    out += (out.empty() ? "" : ", ") + std::string(name);
        });
    });
    return out;
}

// The fields of the list whose values differ between `a` and `b`, comma-separated.
template <class Record> std::string fields_differing(const Record& a, const Record& b) {
    std::string out;
    fields(a, [&](const char* name, const auto& member) {
        fields(b, [&](const char* other, const auto& other_member) {
            if constexpr (std::is_same_v<decltype(member), decltype(other_member)>)
                if (std::string(name) == other && !(member == other_member))
                    out += (out.empty() ? "" : ", ") + std::string(name);
        });
    });
    return out;
}

} // namespace rig::test
