// SPDX-License-Identifier: MIT
// The commits of a multisection round.
#include "bisect/multisect.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <set>

namespace rig::bisect {

namespace {

// Beyond this many commits the bit sets below (n * n bits) would take more memory than a
// round is worth: the place in topological order stands in for the count, exact on a line.
constexpr size_t k_max_exact = 20000;

// How many of the remaining commits each one reaches (its ancestors among them and
// itself), from bit sets filled parents first: `commits` lists children before parents.
std::vector<size_t> ancestor_counts(const Remaining& remaining) {
    const size_t n = remaining.commits.size();
    if (n > k_max_exact) {
        std::vector<size_t> places(n);
        for (size_t i = 0; i < n; ++i)
            places[i] = n - i;
        return places;
    }
    // One flat matrix, a row of `words` per commit: one allocation, and GCC's -O3 cannot
    // mistake a row count for a negative size as it did with a vector of rows.
    const size_t words = (n + 63) / 64;
    std::vector<uint64_t> reach(n * words, 0);
    std::vector<size_t> counts(n, 0);
    for (size_t i = n; i-- > 0;) {
        uint64_t* mine = reach.data() + i * words;
        mine[i / 64] |= uint64_t{1} << (i % 64);
        for (size_t parent : remaining.commits[i].parents)
            if (parent > i && parent < n) // listed after its child, as topo order has it
                for (size_t w = 0; w < words; ++w)
                    mine[w] |= reach[parent * words + w];
        for (size_t w = 0; w < words; ++w)
            counts[i] += static_cast<size_t>(__builtin_popcountll(mine[w]));
    }
    return counts;
}

// The commits of `remaining` that `keep` says to keep, their parents renumbered.
Remaining subset(const Remaining& remaining, const std::vector<bool>& keep, std::string bad) {
    std::vector<size_t> index_of(remaining.commits.size(), SIZE_MAX);
    Remaining out;
    out.bad = std::move(bad);
    for (size_t i = 0; i < remaining.commits.size(); ++i)
        if (keep[i]) {
            index_of[i] = out.commits.size();
            out.commits.push_back({remaining.commits[i].sha, {}});
        }
    for (size_t i = 0; i < remaining.commits.size(); ++i)
        if (keep[i])
            for (size_t parent : remaining.commits[i].parents)
                if (parent < index_of.size() && index_of[parent] != SIZE_MAX)
                    out.commits[index_of[i]].parents.push_back(index_of[parent]);
    for (const std::string& sha : remaining.skipped)
        out.skipped.push_back(sha);
    return out;
}

// The commits git may test next among what is left: its list of them holds N commits,
// the bad one included, and it takes one that reaches w of them (itself included) with
// |2w - N| <= 1 (git's "halfway"), whichever it meets first as it counts; failing one (a
// history with merges), the first with min(w, N - w) largest. All halfway ones are given.
std::vector<std::string> midpoints(const Remaining& left) {
    const std::set<std::string> skipped(left.skipped.begin(), left.skipped.end());
    const std::vector<size_t> counts = ancestor_counts(left);
    const size_t n = left.commits.size();
    auto score = [&](size_t i) { return std::min(counts[i], n - counts[i]); };
    std::vector<std::string> halfway;
    std::optional<size_t> best;
    for (size_t i = 0; i < n; ++i) {
        const std::string& sha = left.commits[i].sha;
        if (sha == left.bad || skipped.count(sha))
            continue;
        const size_t twice = 2 * counts[i];
        if (twice + 1 >= n && twice <= n + 1)
            halfway.push_back(sha);
        if (!best || score(i) > score(*best))
            best = i;
    }
    if (!halfway.empty())
        return halfway;
    if (best)
        return {left.commits[*best].sha};
    return {};
}

} // namespace

std::vector<std::string> next_after(const Remaining& remaining, const std::string& sha) {
    const size_t n = remaining.commits.size();
    auto at = std::find_if(remaining.commits.begin(), remaining.commits.end(),
                           [&](const Remaining::Commit& commit) { return commit.sha == sha; });
    if (at == remaining.commits.end())
        return {};
    // `sha` and its ancestors: children come before their parents in `commits`.
    std::vector<bool> below(n, false);
    below[static_cast<size_t>(at - remaining.commits.begin())] = true;
    for (size_t i = 0; i < n; ++i)
        if (below[i])
            for (size_t parent : remaining.commits[i].parents)
                if (parent > i && parent < n)
                    below[parent] = true;
    std::vector<bool> above(n);
    for (size_t i = 0; i < n; ++i)
        above[i] = !below[i];
    // Alternately the bad side's and the good side's, so that a build stopped early has
    // served both verdicts alike.
    const auto if_bad = midpoints(subset(remaining, below, sha));
    const auto if_good = midpoints(subset(remaining, above, remaining.bad));
    std::vector<std::string> out;
    for (size_t i = 0; i < std::max(if_bad.size(), if_good.size()); ++i)
        for (const auto* side : {&if_bad, &if_good})
            if (i < side->size() && std::find(out.begin(), out.end(), (*side)[i]) == out.end())
                out.push_back((*side)[i]);
    return out;
}

std::vector<std::string> split_points(const Remaining& remaining, size_t k) {
    const size_t n = remaining.commits.size();
    if (k == 0 || n == 0)
        return {};
    const std::set<std::string> skipped(remaining.skipped.begin(), remaining.skipped.end());
    std::vector<size_t> counts = ancestor_counts(remaining);
    std::vector<bool> taken(n, false);
    for (size_t i = 0; i < n; ++i)
        taken[i] =
            remaining.commits[i].sha == remaining.bad || skipped.count(remaining.commits[i].sha);
    std::vector<size_t> chosen;
    for (size_t part = 1; part <= k; ++part) {
        // |count - part * n / (k + 1)|, times k + 1 to stay in whole numbers.
        auto distance = [&](size_t i) {
            int64_t scaled = static_cast<int64_t>(counts[i] * (k + 1));
            int64_t target = static_cast<int64_t>(part * n);
            return scaled > target ? scaled - target : target - scaled;
        };
        std::optional<size_t> best;
        for (size_t i = 0; i < n; ++i)
            if (!taken[i] && (!best || distance(i) < distance(*best)))
                best = i;
        if (!best)
            break;
        taken[*best] = true;
        chosen.push_back(*best);
    }
    std::sort(chosen.begin(), chosen.end(), [&](size_t a, size_t b) {
        return counts[a] != counts[b] ? counts[a] < counts[b] : a > b;
    });
    std::vector<std::string> out;
    for (size_t i : chosen)
        out.push_back(remaining.commits[i].sha);
    return out;
}

bool still_open(const Remaining& remaining, const std::string& sha) {
    if (sha == remaining.bad)
        return false;
    return std::any_of(remaining.commits.begin(), remaining.commits.end(),
                       [&](const Remaining::Commit& commit) { return commit.sha == sha; });
}

} // namespace rig::bisect
