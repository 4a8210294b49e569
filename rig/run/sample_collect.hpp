// SPDX-License-Identifier: MIT
// A stopped guest's report turned into its sample: host metrics, CPU figures, evidence.
#pragma once

#include "core/sample.hpp"
#include "guest/protocol.hpp"
#include "run/sample.hpp"
#include "run/sample_launch.hpp"
#include "run/sample_watch.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rig::run {

// The metrics rig measures itself: each phase's time, and the requests counted by the
// host (the trace and the log are read, then removed: a long compile's run to tens of
// megabytes). `paused`: the phases the workload checks after (core::paused_phases).
void add_host_metrics(core::Sample& sample, const guest::AgentReport& report,
                      const CountSources& sources, const std::vector<std::string>& paused,
                      std::string& note);

// The evidence that explains an outcome: the setup error, the end of the console, or
// the end of the workload's output.
std::string evidence_for(core::Outcome outcome, const guest::AgentReport& report,
                         const std::string& console_tail, const std::string& note);

// The sample as run_sample returns it. Once its folder ran out of space, the reason comes
// first in its evidence, and its share and initramfs copy (rebuilt by any rerun) are
// removed so that its record still fits in the database beside them.
SampleRun settle(core::Sample sample, const SpaceWatch& space, const std::filesystem::path& dir);

// What QEMU and virtiofsd said, for an infra-error's evidence: why a guest never ran.
std::string helper_logs(const std::filesystem::path& dir);

// The workload window's host figures, from the CPU marks at its start and end, its pauses
// for checks left out.
void add_cpu_figures(core::Sample& sample, const Watch& watch);

} // namespace rig::run
