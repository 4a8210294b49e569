// SPDX-License-Identifier: MIT
// Multisection: with k guest slots, k commits of what is left tested at once, so that a
// range of n commits takes about log_(k+1) n rounds rather than log2 n steps. git's own
// bisect still keeps the state (every verdict is told to it); this chooses the commits of
// a round and says which verdicts it can still take. Pure.
#pragma once

#include "bisect/history.hpp"

#include <string>
#include <vector>

namespace rig::bisect {

// Up to `k` commits of `remaining` to test in one round, oldest first: for i = 1..k the
// commit whose ancestors among the remaining ones (itself included) number nearest
// i*N/(k+1), so that the round splits the N commits left into k+1 parts about evenly
// (with k = 1, git's own midpoint rule; on a history with merges, an even split of the set
// of candidates as git's is). Never the known bad commit or a skipped one; fewer when fewer
// are left to test.
std::vector<std::string> split_points(const Remaining& remaining, size_t k);

// Whether a verdict on `sha` still tells the bisect something: it is one of the remaining
// commits and not the known bad one. Verdicts of one round are told in order, each only
// while this holds: a commit after one that tested bad, or before one that tested good,
// has left the range (on a flaky verdict the earlier one of the two wins, on a resume as
// the first time).
bool still_open(const Remaining& remaining, const std::string& sha);

// The commits the bisect may test after `sha`, for each verdict it can get: git's
// midpoints of what is left if `sha` is bad (its ancestors) and if it is good (the rest),
// two of each at most, the bad side's first, then the good side's, and so on. None for a
// verdict that leaves nothing to test. What a bisect builds while `sha`'s guests run, so
// that the next step finds its kernel ready; a guess, never a verdict.
std::vector<std::string> next_after(const Remaining& remaining, const std::string& sha);

} // namespace rig::bisect
