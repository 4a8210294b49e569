// SPDX-License-Identifier: MIT
// A watch's history read from the database (`rig report --history`), and the dashboard the
// watcher keeps up to date after each round that tested a head: a folder with one page
// (report/history.hpp) that can be served as it is.
#pragma once

#include "core/scenario.hpp"
#include "report/history.hpp"
#include "store/store.hpp"

#include <filesystem>

namespace rig::watch {

// Every head of the scenario's watch, its regressions, and a trend per cell and watched
// figure: each duration or metric criterion, or the duration when the watch has none. With
// `cells` (as `rig report --cell` takes them), only the cells that match one.
Expected<report::History> load_history(const core::Scenario& scenario, store::Database& db,
                                       const std::vector<std::string>& cells = {});

// The scenario's dashboard folder (`watch: {dashboard: ...}`, relative to the scenario's
// folder); empty when it has none.
std::filesystem::path dashboard_folder(const core::Scenario& scenario);

// index.html in the dashboard folder, written whole and then renamed into place.
Expected<void> write_dashboard(const core::Scenario& scenario, store::Database& db);

} // namespace rig::watch
