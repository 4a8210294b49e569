// SPDX-License-Identifier: MIT
// Rendering of an expanded matrix.
#include "report/plan.hpp"

#include "report/table.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <set>

namespace rig::report {

namespace {

std::string render_text(const core::Scenario& scenario, const std::vector<core::Cell>& cells) {
    // Axes beyond the fixed columns (the fuse knobs) get a column each, only when a cell
    // has them, so that fuse cells differing in a knob do not look alike.
    std::set<std::string> extras;
    for (const core::Cell& cell : cells)
        for (const auto& [axis, value] : cell.params)
            if (axis != "config" && axis != "fs" && axis != "msize" && axis != "cache")
                extras.insert(axis);
    std::vector<Column> columns{{"id"},   {"kernel"}, {"config"}, {"fs"}, {"msize", Align::right},
                                {"cache"}};
    for (const std::string& axis : extras)
        columns.push_back({axis});
    columns.push_back({"workload"});
    Table table(columns);
    std::string workload = describe_workload(scenario.workload);
    for (const core::Cell& cell : cells) {
        std::vector<std::string> row{cell.id,
                                     cell.kernel_name,
                                     cell.config,
                                     cell.param("fs"),
                                     or_dash(cell.param("msize")),
                                     or_dash(cell.cache())};
        for (const std::string& axis : extras)
            row.push_back(or_dash(cell.param(axis)));
        row.push_back(workload);
        table.add_row(row);
    }

    size_t boots = cells.size() * static_cast<size_t>(scenario.repeat + scenario.warmup);
    std::string out = "scenario " + scenario.name + " (" + scenario.file + ")\n\n";
    out += table.to_text();
    out += "\n" + std::to_string(cells.size()) + " cells x " + std::to_string(scenario.repeat) +
           " repeats + " + std::to_string(scenario.warmup) + " warmup = " + std::to_string(boots) +
           " boots\n";
    return out;
}

std::string render_json(const core::Scenario& scenario, const std::vector<core::Cell>& cells) {
    util::Json out;
    out["scenario"] = scenario.name;
    out["file"] = scenario.file;
    out["repeat"] = scenario.repeat;
    out["warmup"] = scenario.warmup;
    out["workload"] = describe_workload(scenario.workload);
    out["cells"] = util::Json::array();
    for (const core::Cell& cell : cells) {
        util::Json entry;
        entry["id"] = cell.id;
        entry["kernel"] = cell.kernel_name;
        entry["config"] = cell.config;
        for (const auto& [axis, value] : cell.params) {
            if (axis == "msize")
                entry[axis] = std::stoull(value);
            else if (axis != "config")
                entry[axis] = value;
        }
        out["cells"].push_back(std::move(entry));
    }
    out["count"] = cells.size();
    // A scenario's text need not be UTF-8: json_text replaces what is not.
    return util::json_text(out);
}

} // namespace

std::string describe_workload(const core::Workload& workload) {
    std::string steps = workload.command;
    if (!workload.phases.empty()) {
        std::vector<std::string> names;
        for (const core::WorkloadPhase& phase : workload.phases)
            names.push_back(phase.name);
        steps = "phases " + util::join(names, ", ");
    }
    switch (workload.kind) {
    case core::WorkloadKind::generate:
        return "generated C (" + std::to_string(workload.generate.units) + " units): " + steps;
    case core::WorkloadKind::tree:
        return workload.tree + ": " + steps;
    case core::WorkloadKind::command:
        return steps;
    case core::WorkloadKind::module: {
        std::vector<std::string> params;
        for (const auto& [name, value] : workload.module_params)
            params.push_back(name + "=" + value);
        return "module " + workload.module + (params.empty() ? "" : " " + util::join(params, " "));
    }
    case core::WorkloadKind::readback:
        return "readback: " + std::to_string(workload.readback.files) + " files of " +
               std::to_string(workload.readback.bytes) + " bytes each way";
    }
    return {};
}

std::string render_plan(const core::Scenario& scenario, const std::vector<core::Cell>& cells,
                        PlanFormat format) {
    return format == PlanFormat::json ? render_json(scenario, cells) : render_text(scenario, cells);
}

} // namespace rig::report
