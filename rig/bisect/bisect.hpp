// SPDX-License-Identifier: MIT
// `rig bisect`: one cell of a scenario between a good and a bad commit of its git kernel,
// unattended and resumable. Endpoints are checked first, each commit gets a verdict from
// as many samples as the criterion needs, and the culprit is verified before it is named.
// Everything lives in the database: a killed bisect resumes from its stored steps.
#pragma once

#include "bisect/settings.hpp"
#include "core/status.hpp"
#include "store/store.hpp"
#include "util/error.hpp"
#include "vm/hypervisor.hpp"

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

namespace rig::bisect {

// Loads and checks the scenario and the revisions, stores a new bisect (and the run that
// holds its samples) and returns its id. Nothing is built yet; a config bisect's two
// configs are resolved (seconds each), saying so on `out` when given.
Expected<int64_t> create_bisect(const StartOptions& options, store::Database& db,
                                const Settings& settings, std::ostream* out = nullptr);

// Runs what the bisect still lacks. Samples run on the scenario's backend: `hypervisor`
// (this machine's QEMU) for qemu, the scenario's libvirt URI, or Slurm jobs; kernels are
// built here in every case. Steps already stored are replayed into git, samples
// already stored are reused and a cached build is not rebuilt: only the sample in flight
// when rig was killed is redone.
Expected<core::BisectStatus> run_bisect(int64_t id, store::Database& db, vm::Hypervisor& hypervisor,
                                        const Settings& settings,
                                        const std::atomic<bool>& interrupted, std::ostream& out);

// `git bisect log` of the bisect, replayed from its stored steps.
Expected<std::string> bisect_log(int64_t id, store::Database& db, const Settings& settings);

} // namespace rig::bisect
