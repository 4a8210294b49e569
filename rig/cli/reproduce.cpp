// SPDX-License-Identifier: MIT
// `rig reproduce`: finds a stored sample's folder and its cell, and packs the recipe the
// sample kept (run/reproducer) with a fresh work tree of the cell's workload.
#include "cli/reproduce.hpp"

#include "cli/hosts.hpp"
#include "core/results_folder.hpp"
#include "run/cells.hpp"
#include "run/reproducer.hpp"
#include "spec/spec.hpp"
#include "store/store.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

namespace rig::cli {

namespace {

// The cell of `run_id` that `filter` names; a usage error unless exactly one matches.
Expected<core::CellRecord> chosen_cell(store::Database& db, int64_t run_id,
                                       const std::string& filter) {
    auto records = RIG_TRY(db.cell_records(run_id));
    if (!records || records->empty())
        return fail(ErrorKind::usage, "run " + std::to_string(run_id) + " has no stored cells");
    std::vector<core::CellRecord> matched;
    for (core::CellRecord& record : *records)
        if (filter.empty() || RIG_TRY(core::cell_matches(record.cell, filter)))
            matched.push_back(std::move(record));
    if (matched.size() == 1)
        return matched.front();
    std::string cells;
    for (const core::CellRecord& record : matched.empty() ? *records : matched)
        cells += "\n  " + record.cell.id + "  " + record.cell.label();
    return fail(ErrorKind::usage, (matched.empty() ? "no cell of run " + std::to_string(run_id) +
                                                         " matches '" + filter + "'; its cells:"
                                                   : "--cell '" + filter + "' matches " +
                                                         std::to_string(matched.size()) +
                                                         " cells; name one with --cell:") +
                                      cells);
}

// The folder of the sample, the one asked for or the first that kept its recipe.
Expected<std::filesystem::path> sample_folder(const std::filesystem::path& cell_dir,
                                              std::optional<int> repetition) {
    std::error_code ec;
    auto has_recipe = [&](const std::filesystem::path& dir) {
        return std::filesystem::is_regular_file(dir / run::k_recipe_script, ec);
    };
    if (repetition) {
        std::filesystem::path dir = cell_dir / std::to_string(*repetition);
        if (!has_recipe(dir))
            return fail(ErrorKind::usage, "sample " + std::to_string(*repetition) + " (" +
                                              dir.string() + ") kept no reproducer recipe");
        return dir;
    }
    std::vector<int> repetitions;
    for (const auto& entry : std::filesystem::directory_iterator(cell_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.empty() &&
            std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
            has_recipe(entry.path()))
            repetitions.push_back(std::stoi(name));
    }
    if (repetitions.empty())
        return fail(ErrorKind::usage, "no sample in " + cell_dir.string() +
                                          " kept a reproducer recipe (samples of rig before "
                                          "recipes, or a folder cleaned up)");
    return cell_dir / std::to_string(*std::min_element(repetitions.begin(), repetitions.end()));
}

Expected<std::filesystem::path> reproduce(const GlobalOptions& global,
                                          const ReproduceCommandOptions& options) {
    auto db = RIG_TRY(store::Database::open(global.db, store::Access::existing));
    auto run = RIG_TRY(db->run(options.run));
    if (!run)
        return fail(ErrorKind::usage, "no run " + std::to_string(options.run) + " in the database");
    core::CellRecord record = RIG_TRY(chosen_cell(*db, options.run, options.cell));
    // Where the run kept its samples, as `rig run` chose it (the Slurm shared folder too).
    core::Scenario scenario = RIG_TRY(spec::parse_scenario(run->scenario_text, run->scenario_file));
    RunCommandOptions started;
    started.backend = run->backend;
    run::RunSettings settings = run_settings(global, scenario, started);
    const std::filesystem::path root =
        settings.shared.empty() ? settings.results_dir : settings.shared;
    const std::filesystem::path cell_dir = core::results_folder(root, global.db, core::Kept::runs) /
                                           std::to_string(options.run) / record.cell.id;
    run::ReproducerParts parts;
    parts.sample_dir = RIG_TRY(sample_folder(cell_dir, options.repetition));
    parts.workload = run::sample_scenario(record).workload;
    parts.about = "rig's sample " + parts.sample_dir.filename().string() + " of " +
                  record.cell.label() + " (scenario " + run->scenario_name + ", run " +
                  std::to_string(options.run) + ").\n";
    std::filesystem::path tarball = options.output;
    if (tarball.empty())
        tarball = "rig-run" + std::to_string(options.run) + "-" + record.cell.id + "-" +
                  parts.sample_dir.filename().string() + ".repro" +
                  std::string(run::k_tarball_suffix);
    else if (tarball.filename().string().size() <= run::k_tarball_suffix.size() ||
             !tarball.filename().string().ends_with(run::k_tarball_suffix))
        return fail(ErrorKind::usage, "--output must name a " + std::string(run::k_tarball_suffix) +
                                          " file, not " + tarball.string());
    RIG_TRY(run::write_reproducer(parts, std::filesystem::absolute(tarball)));
    return tarball;
}

} // namespace

CLI::App* add_reproduce_command(CLI::App& app, ReproduceCommandOptions& options) {
    auto* reproduce = app.add_subcommand(
        "reproduce", "pack one sample of a run as a tarball that boots its guest without rig");
    reproduce->add_option("run", options.run, "run id")->required();
    reproduce->add_option("--cell", options.cell,
                          "the cell: id or id prefix, or KEY=VALUE[,KEY=VALUE] on kernel, "
                          "config or an axis (default: the run's only cell)");
    reproduce
        ->add_option("--repetition", options.repetition,
                     "the sample's repetition (default: the first that kept its recipe)")
        ->check(CLI::NonNegativeNumber);
    reproduce->add_option("-o,--output", options.output,
                          "the tarball, NAME.tar.gz (default: "
                          "rig-runRUN-CELL-REPETITION.repro.tar.gz here)");
    return reproduce;
}

int reproduce_command(const GlobalOptions& global, const ReproduceCommandOptions& options) {
    auto tarball = reproduce(global, options);
    if (!tarball)
        return report_error(tarball.error());
    const std::string name = tarball->filename().string();
    std::cout << "wrote " << tarball->string() << "; without rig: tar xf " << name << " && "
              << run::reproducer_folder(name) << "/run.sh\n";
    return k_exit_ok;
}

} // namespace rig::cli
