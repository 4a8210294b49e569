// SPDX-License-Identifier: MIT
// A sample's outputs held against a reference before it is stored: the same files as an
// earlier sample saw them, where the workload builds reproducibly (the generated project
// does: scenarios/README.md, "Outputs and readback"). The reference is the cell's
// cache=none twin, the mode that asks the server at every read, when the run has one with
// outputs, else the cell's own earliest sample; in a bisect, GOOD's, else the commit's own. A file
// that differs, or is on one side only, is an error line and the sample wrong-output, even where
// guest and server agree.
#pragma once

#include "core/cell.hpp"
#include "core/sample.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

#include <string>
#include <vector>

namespace rig::run {

// A cell whose earliest sample may be the reference, and how the lines name it ("this
// cell", "the cache=none twin", "GOOD 1a2b3c4d5e6f").
struct ReferenceCell {
    std::string cell_id;
    std::string name;
};

// The run loop's references for `cell`: its cache=none twin among `cells`, then itself.
std::vector<ReferenceCell> run_references(const core::Cell& cell,
                                          const std::vector<core::Cell>& cells);

// Holds the sample against the earliest reference sample of the first of `references`
// that has one (store::Database::reference_outputs); a sample that did not measure, is
// wrong-output already or hashed nothing is left as it is.
Expected<void> hold_against_reference(store::Database& db, int64_t run_id,
                                      const std::vector<ReferenceCell>& references,
                                      core::Sample& sample);

// The same, with the run loop's references for the sample's cell.
Expected<void> hold_against_reference(store::Database& db, int64_t run_id,
                                      const std::vector<core::Cell>& cells, core::Sample& sample);

} // namespace rig::run
