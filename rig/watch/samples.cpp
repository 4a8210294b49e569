// SPDX-License-Identifier: MIT
// A head's run read back by cell key.
#include "watch/samples.hpp"

namespace rig::watch {

Expected<RunSamples> samples_of_run(store::Database& db, int64_t run_id) {
    RunSamples out;
    std::map<std::string, std::string> key_of;
    for (const core::Cell& cell : RIG_TRY(db.cells(run_id))) {
        key_of[cell.id] = cell.key;
        out.cells[cell.key] = cell;
    }
    for (core::Sample& sample : RIG_TRY(db.samples(run_id)))
        out.by_key[key_of[sample.cell_id]].push_back(std::move(sample));
    return out;
}

} // namespace rig::watch
