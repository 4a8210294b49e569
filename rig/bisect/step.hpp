// SPDX-License-Identifier: MIT
// One step of a bisect: a commit built, then sampled until its policy gives a verdict,
// and stored. A step stored before a kill is taken over, not measured again.
#pragma once

#include "bisect/context.hpp"
#include "kernel/artifact.hpp"

#include <atomic>
#include <filesystem>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace rig::bisect {

// How a step decides when it has enough samples.
struct Policy {
    enum class Kind { fixed, functional, against_parent, duration, metric } kind = Kind::fixed;
    int samples = 0; // fixed: exactly this many; functional: clean ones needed; duration,
                     // metric: the first verdict's
    int budget = 0;  // functional, against_parent, duration, metric: at most this many
    const ErrorModel* errors = nullptr; // errors criterion; none yet: every failure counts
    const Calibration* calibration = nullptr;
    core::Verdict calibrates = core::Verdict::unsure; // fixed: the endpoint being calibrated
    const MetricPlan* metric_plan = nullptr;
    // against_parent: the samples before the culprit (its parent's and GOOD's) that
    // reproduced, and all of them that reproduced or were clean.
    int parent_reproduced = 0;
    int parent_samples = 0;
};

// The policy's error model, or the empty one.
const ErrorModel& model_of(const Policy& policy);

// The commit a step measures, and why.
struct StepRequest {
    core::StepRole role;
    std::string sha;
    const Policy& policy;
    std::vector<std::string> patches = {}; // added to the kernel's own
    std::string label = "";                // appended to the kernel's name: "+revert"
};

// Where samples run and what a step prints.
struct StepIo {
    vm::Hypervisor& hypervisor; // this machine's QEMU, unless the context has libvirt
    const std::atomic<bool>& interrupted;
    std::ostream& out;
};

// A commit's cell: the scenario with the kernel at that commit (and any patches).
struct CommitCell {
    core::Scenario scenario;
    core::Cell cell;
};

// The scenario with the bisected kernel at `sha` (and `patches` added, its name marked
// `label`), and its cell: a series' commit as its base with the first patches, a config
// line's as the cell's commit with that step's options.
CommitCell commit_cell(const Context& context, const std::string& sha,
                       const std::vector<std::string>& patches = {}, const std::string& label = "");
// GOOD's cell, whose earliest sample every commit's outputs are held against.
std::string good_cell_id(const Context& context);
// What builds `target`'s kernel.
kernel::GitRequest commit_request(const Context& context, const CommitCell& target);

// What one step's samples boot: the commit's cell, kernel and initramfs.
struct Boot {
    const CommitCell& target;
    const kernel::Artifact& kernel;
    std::filesystem::path initrd;
    std::string prefix; // of every line the step prints
};

struct Measured {
    store::BisectStep step;
    std::vector<core::Sample> samples;
    bool interrupted = false;
    std::optional<std::string> stopped; // infra errors in a row, or a full disk: why
};

// One step being sampled: its request, what its samples boot, what it has so far.
struct Measuring {
    const StepRequest& request;
    const Boot& boot;
    Measured& measured;
    int next_repetition = 0;
    int infra_in_a_row = 0;
    Decision decision = {};
};

// The measure loop: samples each step until its policy decides, skipping infra errors up
// to the options' infra_retries in a row; sets `measured.interrupted`, or `stopped` with
// why, instead when the bisect must stop. With the context's CPU sets (--jobs) a batch of
// guests runs at once, one per set, taken round-robin from the undecided steps, so that
// steps measured together interleave in time and over the same sets. Each sample is
// stored and added to its step's `measured`; each step's `decision` is its verdict.
Expected<void> sample_until_decided(Context& context, const StepIo& io,
                                    std::vector<Measuring>& steps);

// Builds the commit (a cache hit when a killed bisect already built it), then samples it
// until the policy decides, reusing the samples of this step stored before a kill. While
// its guests run, the commits of `ahead` are built one after another on another thread
// (CommitBuilder::build_ahead), and the step waits for them before it returns.
Expected<Measured> measure(Context& context, const StepRequest& request, const StepIo& io,
                           const std::vector<std::string>& ahead = {});
// Samples of a commit taken as `measure` takes them, but stored as no step: the step of
// that commit measured later takes them over as its first (keep_unclaimed_samples). Under
// the output criterion, GOOD's first sample, taken before BAD's to be every commit's
// reference.
Expected<Measured> measure_unclaimed(Context& context, const StepRequest& request,
                                     const StepIo& io);
// A measured step, or the finished step of the same role and commit stored before a resume.
Expected<Measured> measure_once(Context& context, const StepRequest& request, const StepIo& io);

// measure_once for several steps at once, their samples interleaved (the endpoints of a
// duration or metric bisect: a drift of the host then touches both alike). In request
// order; a Ctrl-C during a build returns at once with that step interrupted.
Expected<std::vector<Measured>>
measure_together(Context& context, const std::vector<StepRequest>& requests, const StepIo& io);

} // namespace rig::bisect
