// SPDX-License-Identifier: MIT
// Cells stored whole: frozen into records when a run or a bisect begins, and thawed back
// into the scenario and cells the run loop runs, with no file of the user's read again.
#pragma once

#include "core/cell.hpp"
#include "core/cell_record.hpp"
#include "core/scenario.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace rig::run {

// A git kernel's ref resolved to its commit in `repo`; a config error when it names none.
using ResolveRef =
    std::function<Expected<std::string>(const std::filesystem::path& repo, const std::string& ref)>;

// Each cell whole: a git kernel's ref resolved to its commit (by `resolve`; null:
// kernel::resolve_commit, git in the repository), its repository made absolute, the text
// of its fragments and patches read; the workload's paths made absolute. A missing
// repository, ref, fragment or patch is a config error that names it.
Expected<std::vector<core::CellRecord>> freeze(const core::Scenario& scenario,
                                               const std::vector<core::Cell>& cells,
                                               const ResolveRef& resolve = nullptr);

struct Thawed {
    core::Scenario scenario; // one kernel entry per distinct stored kernel
    std::vector<core::Cell> cells;
};

// `settings` (the run's scenario: name, repeat, backend, ...) with its kernels, workload,
// guest, timeouts and cells taken from `records`. Fragments and patches are written to
// `inputs`, which becomes the scenario's folder; a git kernel's ref is its stored commit.
Expected<Thawed> thaw(core::Scenario settings, const std::vector<core::CellRecord>& records,
                      const std::filesystem::path& inputs);

// What one sample needs of its cell: the cell, its workload, guest shape and timeouts
// (the kernel a sample boots comes built); and the scenario run_sample reads them from.
core::CellRecord sample_record(const core::Scenario& scenario, const core::Cell& cell);
core::Scenario sample_scenario(const core::CellRecord& record);

} // namespace rig::run
