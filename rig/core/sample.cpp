// SPDX-License-Identifier: MIT
// Outcome names as stored and printed; a sample's metrics by name.
#include "core/sample.hpp"

#include <array>
#include <utility>

namespace rig::core {

namespace {

constexpr std::array<std::pair<Outcome, std::string_view>, 10> k_outcomes{{
    {Outcome::ok, "ok"},
    {Outcome::errors, "errors"},
    {Outcome::workload_failed, "workload-failed"},
    {Outcome::kernel_panic, "kernel-panic"},
    {Outcome::boot_timeout, "boot-timeout"},
    {Outcome::workload_timeout, "workload-timeout"},
    {Outcome::console_silence, "console-silence"},
    {Outcome::infra_error, "infra-error"},
    {Outcome::aborted, "aborted"},
    {Outcome::build_failed, "build-failed"},
}};

} // namespace

std::string_view to_string(Outcome outcome) {
    for (const auto& [value, name] : k_outcomes)
        if (value == outcome)
            return name;
    return "?";
}

std::optional<Outcome> parse_outcome(std::string_view text) {
    for (const auto& [value, name] : k_outcomes)
        if (name == text)
            return value;
    return std::nullopt;
}

std::optional<double> metric_value(const Sample& sample, std::string_view name) {
    for (const Metric& metric : sample.metrics)
        if (metric.name == name)
            return metric.value;
    return std::nullopt;
}

} // namespace rig::core
