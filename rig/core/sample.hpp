// SPDX-License-Identifier: MIT
// What one repetition of a cell produced: outcome class, timings, CPU, mounts, evidence.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

// A panic, a hang or a failed compile is data, never an Error: each is an outcome.
enum class Outcome {
    ok,
    errors,          // the workload exited 0 but error lines were seen
    workload_failed, // non-zero exit status
    kernel_panic,
    boot_timeout,
    workload_timeout,
    console_silence, // nothing on console or channel for timeouts.silence
    infra_error,     // QEMU would not start, virtiofsd died, ...
    aborted,         // rig was interrupted while the sample ran
    build_failed,    // a module workload did not compile against the cell's kernel
};

std::string_view to_string(Outcome outcome);
std::optional<Outcome> parse_outcome(std::string_view text);

enum class Severity { warning, error };

struct ErrorLine {
    Severity severity = Severity::error;
    std::string source;    // console, dmesg, workload
    std::string line;      // as printed
    std::string signature; // addresses, numbers, pids and timestamps stripped
};

struct Metric {
    std::string name;
    double value = 0;
    std::string unit;
};

struct Sample {
    int64_t id = 0;
    std::string cell_id;
    int repetition = 0; // 0-based; warmups are not stored as samples
    Outcome outcome = Outcome::infra_error;
    std::string accel; // kvm or tcg
    std::string cpus;  // the host CPUs it ran on under --jobs ("2-3"); empty: unpinned
    std::string kernel_artifact;
    double guest_seconds = 0; // workload time measured by the guest
    double wall_seconds = 0;  // host wall time of the workload phase
    double total_seconds = 0; // host wall time of the whole sample, boot to exit
    double qemu_cpu_seconds = 0;
    double helper_cpu_seconds = 0; // virtiofsd and other helpers
    double host_cpu_seconds = 0;   // whole host, busy time over the workload window
    double host_cpu_percent =
        0; // of the host's total capacity, as Schoenebeck's 9p cache/msize table reports
    std::string mount_requested;  // options rig asked for
    std::string mount_negotiated; // as /proc/mounts printed them
    std::optional<uint64_t> msize_negotiated;
    std::string cache_negotiated;
    int exit_status = -1;
    int error_count = 0;
    int warning_count = 0;
    std::string evidence;   // log excerpt that explains the outcome
    std::string started_at; // ISO 8601 UTC
    std::vector<ErrorLine> lines;
    std::vector<Metric> metrics;
};

// The value of the sample's metric `name`; nullopt when the sample lacks it, which is
// "unknown", never 0.
std::optional<double> metric_value(const Sample& sample, std::string_view name);

} // namespace rig::core
