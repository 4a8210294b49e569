// SPDX-License-Identifier: MIT
// Where a results database keeps its files beside it: each run's and each bisect's samples,
// logs, job files, inputs and git state.
#pragma once

#include <filesystem>

namespace rig::core {

enum class Kept { runs, bisects };

// The folder of a database's runs or bisects under `root`: the database's own folder, or
// under backend slurm the folder every node sees. A run or bisect N is `that / N`.
// The default database, rig.db (and "", which callers without one pass), keeps `runs/`
// and `bisects/`; any other file, `FILE`, keeps `FILE.runs/` and `FILE.bisects/` (its
// whole name: fast.db and fast.sqlite are two databases). So two databases in one folder
// never share run 1's folder, and the default layout stays as it always was.
std::filesystem::path results_folder(const std::filesystem::path& root,
                                     const std::filesystem::path& db, Kept kept);

} // namespace rig::core
