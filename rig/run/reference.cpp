// SPDX-License-Identifier: MIT
// Outputs held against a reference sample's.
#include "run/reference.hpp"

#include "run/outputs.hpp"

#include <algorithm>

namespace rig::run {

std::vector<ReferenceCell> run_references(const core::Cell& cell,
                                          const std::vector<core::Cell>& cells) {
    std::vector<ReferenceCell> references;
    if (const core::Cell* twin = core::twin_of(cell, cells, "cache", "none"))
        references.push_back({twin->id, "the cache=none twin"});
    references.push_back({cell.id, "this cell"});
    return references;
}

Expected<void> hold_against_reference(store::Database& db, int64_t run_id,
                                      const std::vector<ReferenceCell>& references,
                                      core::Sample& sample) {
    if (sample.outputs.empty() || !core::measured(sample.outcome) ||
        sample.outcome == core::Outcome::wrong_output)
        return {};
    std::optional<store::ReferenceOutputs> reference;
    std::string name;
    for (const ReferenceCell& candidate : references) {
        reference = RIG_TRY(db.reference_outputs(run_id, candidate.cell_id));
        if (reference) {
            name = "sample " + std::to_string(reference->repetition + 1) + " of " + candidate.name;
            break;
        }
    }
    if (!reference)
        return {};
    // Check by check: the end's, and each after a phase both samples made.
    const auto theirs = split_manifests(reference->outputs);
    OutputCheck check;
    for (const auto& [at, mine] : split_manifests(sample.outputs)) {
        auto found = theirs.find(at);
        if (found == theirs.end())
            continue;
        OutputCheck one =
            check_against(parse_manifest(mine, false), parse_manifest(found->second, false), name);
        if (!at.empty())
            place_after(one, at);
        add_check(check, std::move(one));
    }
    if (check.wrong.empty())
        return {};
    sample.outcome = core::Outcome::wrong_output;
    record_wrong(check, "outputs that differ from " + name, sample.evidence, sample);
    return {};
}

Expected<void> hold_against_reference(store::Database& db, int64_t run_id,
                                      const std::vector<core::Cell>& cells, core::Sample& sample) {
    auto cell = std::find_if(cells.begin(), cells.end(),
                             [&](const core::Cell& c) { return c.id == sample.cell_id; });
    if (cell == cells.end())
        return {};
    return hold_against_reference(db, run_id, run_references(*cell, cells), sample);
}

} // namespace rig::run
