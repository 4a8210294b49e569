// SPDX-License-Identifier: MIT
// The pure part of `rig watch`: whether a head's samples of one cell show a regression
// against a baseline's, under one of the bisect's criteria. A screen, not a verdict: what it
// suspects is confirmed by fresh samples of both sides (the bisect's endpoint check) before
// anything is reported, so it may err toward suspicion but must not miss what the
// confirmation would find.
#pragma once

#include "bisect/verdict.hpp"
#include "core/sample.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rig::watch {

// A metric criterion written without a threshold: a change of this much in either
// direction is suspected.
inline constexpr double k_default_metric_change = 0.10;

// The regression in words ("9p.work.getattr 72 -> 1393 (+1834.7%), threshold +20%"), or
// nullopt when the head holds. Samples the machinery lost (infra, aborted) count on
// neither side.
//   errors: an error family (core::family_of) the head failed with that no baseline
//     sample shows, or a worse outcome (a panic or a hang where the baseline ran);
//   duration, metric: the head's median past the baseline's by the threshold, in the
//     criterion's direction. With two or more values on each side the difference must
//     also test significant (the bisect's endpoint rules), unless neither side varies: an
//     exact count decides from one sample each.
std::optional<std::string> screen(const bisect::Criterion& criterion,
                                  const std::vector<core::Sample>& baseline,
                                  const std::vector<core::Sample>& head);

// A duration or metric criterion's values in the samples that ran to their end (ok, or
// errors): what the screen compares (the history draws the same values, as the database's
// per-cell aggregates keep them: core::figure_values).
std::vector<double> values(const bisect::Criterion& criterion,
                           const std::vector<core::Sample>& samples);

// How the screen's words for a worse outcome begin.
inline constexpr std::string_view k_worse_outcome = "a worse outcome: ";

// The bisect's criterion for what the screen found under `criterion` (`detail`, its
// words): a panic or a hang is bisected as outcome:panic or outcome:hang, since errors
// leaves such samples aside as unusable; anything else under the criterion itself.
std::string bisect_criterion(const std::string& criterion, const std::string& detail);

} // namespace rig::watch
