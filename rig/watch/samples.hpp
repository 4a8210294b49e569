// SPDX-License-Identifier: MIT
// A head's run read back by cell key (core::Cell::key), the cell across commits: what the
// round holds heads against each other by, and what the history draws.
#pragma once

#include "core/cell.hpp"
#include "core/sample.hpp"
#include "store/store.hpp"

#include <map>
#include <string>
#include <vector>

namespace rig::watch {

struct RunSamples {
    std::map<std::string, std::vector<core::Sample>> by_key;
    std::map<std::string, core::Cell> cells;
};

Expected<RunSamples> samples_of_run(store::Database& db, int64_t run_id);

} // namespace rig::watch
