// SPDX-License-Identifier: MIT
// The status words rig stores and prints: one enum each, with the text the database holds.
// Parsing text that is none of an enum's words is an error, never a default: a database
// written by a newer rig, or edited by hand, must not be misread.
#pragma once

#include "util/error.hpp"

#include <string_view>
#include <vector>

namespace rig::core {

// How building a git kernel ended.
enum class BuildOutcome {
    ok,
    build_failed, // make failed; the build keeps the first compiler errors
    config_error, // a patch did not apply or a requested option is not in the .config
};

// A run (`rig run`, or the run that holds a bisect's samples).
enum class RunStatus { running, finished, interrupted };

// A libvirt host of a run: taking samples, or dropped (with the reason stored beside).
enum class HostStatus { up, dropped };

enum class BisectStatus {
    running,          // not finished: resume it
    culprit,          // found and verified
    unverified,       // found, but the verification did not confirm it
    inconclusive,     // skipped or unsure commits hide the culprit in a range
    not_reproducible, // the endpoints do not test as given
    stopped,          // infra errors in a row: resume once the machinery works
    capped,           // its cost cap (builds, boots, hours) came before an answer
    interrupted,      // Ctrl-C
};

// What a commit measured by a bisect is there for.
enum class StepRole {
    bad_endpoint,
    good_endpoint,
    bisect, // a step git asked for
    verify_culprit,
    verify_parent,
    verify_revert, // BAD with the culprit reverted
};

// What a bisect found a commit to be.
enum class Verdict { good, bad, skip, unsure };

// Where a run's guests boot: a scenario's `backend:`, or `rig run --backend`.
enum class Backend { qemu, libvirt, slurm };

// A head of a watched branch (`rig watch`).
enum class HeadStatus {
    testing, // its cells run, or are judged: a round resumes it
    good,    // no confirmed regression against its baselines: the next baseline
    bad,     // a confirmed regression, reported or linked to one reported
    skipped, // its new commits touch none of the watch's paths
    suspect, // a suspected regression not confirmed or not bisected to a commit: not good,
             // not reported; the baseline stays before it
};

// A suspected regression of one cell of a head under one criterion.
enum class FindingStatus {
    suspect,      // found against a baseline; its bisect (which confirms it first) is due
    unconfirmed,  // fresh samples of both sides did not show it: noise
    reported,     // bisected to a culprit that was mailed
    linked,       // the same regression as one reported before
    inconclusive, // the bisect ended in a range, or could not verify its culprit
    stopped,      // the bisect hit its cost cap or the machinery failed
};

// A regression `rig watch` reported: open until a later head no longer shows it.
enum class RegressionStatus { open, fixed };

// A figure a cell keeps of its measured samples (core::figure_values): what the report's
// table, its comparisons and a watch's trends summarize.
enum class Figure {
    duration, // guest seconds of the workload
    cpu,      // host CPU percent over the workload window
    metric,   // one of the sample's metrics, by name
};

std::string_view to_string(BuildOutcome outcome);
std::string_view to_string(RunStatus status);
std::string_view to_string(HostStatus status);
std::string_view to_string(BisectStatus status);
std::string_view to_string(StepRole role);
std::string_view to_string(Verdict verdict);
std::string_view to_string(Backend backend);

Expected<BuildOutcome> parse_build_outcome(std::string_view text);
Expected<RunStatus> parse_run_status(std::string_view text);
Expected<HostStatus> parse_host_status(std::string_view text);
Expected<BisectStatus> parse_bisect_status(std::string_view text);
Expected<StepRole> parse_step_role(std::string_view text);
Expected<Verdict> parse_verdict(std::string_view text);
Expected<Backend> parse_backend(std::string_view text);
std::string_view to_string(HeadStatus status);
std::string_view to_string(FindingStatus status);
std::string_view to_string(RegressionStatus status);
Expected<HeadStatus> parse_head_status(std::string_view text);
Expected<FindingStatus> parse_finding_status(std::string_view text);
Expected<RegressionStatus> parse_regression_status(std::string_view text);
std::string_view to_string(Figure figure);
Expected<Figure> parse_figure(std::string_view text);

// The backends' words in their table's order: for a "did you mean" and the CLI's check.
std::vector<std::string> backend_words();

} // namespace rig::core
