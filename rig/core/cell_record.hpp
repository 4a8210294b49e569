// SPDX-License-Identifier: MIT
// A cell as a run stores it: everything that decides what runs, with no file to read again.
#pragma once

#include "core/cell.hpp"
#include "core/scenario.hpp"
#include "util/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rig::core {

// A file's text as it was when the run began.
struct StoredFile {
    std::string name; // a fragment's name, or a patch's path as the scenario gave it
    std::string sha256;
    std::string text;
};

// One cell whole: resume, the bisect and a Slurm worker read it from the database, so that
// a scenario edited or deleted after the run began, or a ref that moved, changes nothing.
// Relative paths a workload names (tree, module) are stored absolute; a workload's tree and
// module source are read where they are, not stored.
struct CellRecord {
    Cell cell;
    Kernel kernel;                     // the entry as written, its repository made absolute
    std::string commit;                // git: the ref, resolved when the run began
    std::vector<StoredFile> fragments; // git: the text of each of cell.fragments, in order
    std::vector<StoredFile> patches;   // git: in the order `git am` applies them
    // git with a series: its patches in order, applied after `patches` when the cell's
    // `series` is `with`, and its cover letter (empty when it has none): a bisect over the
    // series and a reply to it need both.
    std::vector<StoredFile> series;
    StoredFile series_cover;
    Workload workload;
    Guest guest;
    Timeouts timeouts;
};

// One line of JSON, every field of the record; decode is its inverse.
std::string encode(const CellRecord& record);
// Text that is not a record rig wrote is an infra error naming `what`.
Expected<CellRecord> decode_cell_record(std::string_view json, const std::string& what);

} // namespace rig::core
