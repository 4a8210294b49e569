// SPDX-License-Identifier: MIT
// Freezing cells into records and thawing them for the run loop.
#include "run/cells.hpp"

#include "core/diagnostic.hpp"
#include "kernel/build.hpp"
#include "kernel/config.hpp"
#include "kernel/series.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

#include <map>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

core::StoredFile stored(std::string name, std::string text) {
    std::string sha256 = util::sha256_hex(text);
    return {std::move(name), std::move(sha256), std::move(text)};
}

// What freezing resolves once per run, not once per cell.
struct Lookups {
    std::map<std::pair<std::string, std::string>, std::string> commits; // (repo, ref)
    // A series read, based and checked, with the commit it applies to; by "repo, ref, file".
    std::map<std::string, std::pair<kernel::Series, std::string>> series;
};

// A kernel's series read, its base resolved (the series' base-commit: over the ref) and
// checked to apply there; a config error at the kernel's `series` otherwise. Returns the
// series; `commit` is where it applies.
Expected<kernel::Series> freeze_series(const core::Scenario& scenario, const core::Kernel& entry,
                                       const kernel::GitRequest& request, const fs::path& dir,
                                       std::string& commit, Lookups& lookups,
                                       const ResolveRef& resolve) {
    auto located = [&](const Error& error) {
        return core::config_error(scenario.file, entry.loc, entry.path + ".series", error.message);
    };
    fs::path file = (dir / entry.series).lexically_normal();
    // Every cell of the entry asks: the file is read and checked once.
    const std::string key = request.repo.string() + "\n" + entry.ref + "\n" + file.string();
    if (auto found = lookups.series.find(key); found != lookups.series.end()) {
        commit = found->second.second;
        return found->second.first;
    }
    auto series = kernel::read_series(file);
    if (!series)
        return located(series.error());
    if (!series->base_commit.empty()) {
        auto base = resolve ? resolve(request.repo, series->base_commit)
                            : kernel::resolve_commit(request.repo, series->base_commit);
        if (!base)
            return located(
                Error{ErrorKind::config, "the series is based on " + series->base_commit +
                                             " (its base-commit:), which " + request.repo.string() +
                                             " does not have; fetch it first"});
        if (!commit.empty() && commit != *base)
            return located(Error{ErrorKind::config,
                                 "ref " + entry.ref + " is " + commit.substr(0, 12) +
                                     ", but the series is based on " + base->substr(0, 12) +
                                     " (its base-commit:): drop the ref, or give that one"});
        commit = *base;
    }
    if (commit.empty())
        return located(Error{ErrorKind::config, "the series names no base-commit:, so the "
                                                "kernel needs a ref to apply it to"});
    auto applies = kernel::check_series_applies(request.repo, commit, request.patches, *series,
                                                "series " + file.string());
    if (!applies)
        return located(applies.error());
    lookups.series.emplace(key, std::pair{*series, commit});
    return series;
}

// The git parts of a record: commit, absolute repository, fragment and patch texts, and
// for the cells of a series' `with` its patches and cover letter.
Expected<void> freeze_git(const core::Scenario& scenario, core::CellRecord& record,
                          const fs::path& dir, Lookups& lookups, const ResolveRef& resolve) {
    kernel::GitRequest request = kernel::git_request(record.kernel, record.cell.fragments, dir);
    record.kernel.repo = request.repo.string();
    std::string commit;
    if (!record.kernel.ref.empty()) {
        auto& known = lookups.commits[{record.kernel.repo, record.kernel.ref}];
        if (known.empty())
            known = RIG_TRY(resolve ? resolve(request.repo, record.kernel.ref)
                                    : kernel::resolve_commit(request.repo, record.kernel.ref));
        commit = known;
    }
    if (!record.kernel.series.empty()) {
        kernel::Series series =
            RIG_TRY(freeze_series(scenario, record.kernel, request, dir, commit, lookups, resolve));
        if (record.cell.param("series") == "with") {
            for (const kernel::SeriesMail& patch : series.patches)
                record.series.push_back(stored(patch.file_name(), patch.text));
            if (series.cover)
                record.series_cover = stored("0000-cover-letter.patch", series.cover->text);
        }
    }
    record.commit = commit;
    for (const std::string& name : record.cell.fragments)
        record.fragments.push_back(
            stored(name, RIG_TRY(kernel::fragment_text(name, request.fragment_dirs))));
    for (size_t i = 0; i < request.patches.size(); ++i) {
        if (!fs::is_regular_file(request.patches[i]))
            return fail(ErrorKind::config,
                        "patch " + request.patches[i].string() + " does not exist");
        record.patches.push_back(
            stored(record.kernel.patches[i], util::read_file(request.patches[i])));
    }
    return {};
}

std::string absolute_in(const fs::path& dir, const std::string& path) {
    return path.empty() ? path : (dir / path).lexically_normal().string();
}

Expected<void> write_input(const fs::path& path, const core::StoredFile& file) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (fs::exists(path) && util::read_file(path) == file.text)
        return {};
    return util::write_file_atomically(path, file.text);
}

// The kernel entry a record runs: ref at its commit, patches where thaw wrote them.
Expected<core::Kernel> thaw_kernel(const core::CellRecord& record, const fs::path& inputs) {
    core::Kernel kernel = record.kernel;
    if (kernel.source != core::KernelSource::git)
        return kernel;
    kernel.ref = record.commit;
    // The series is read: its patches are the record's, and never read from a file again.
    kernel.series.clear();
    kernel.patches.clear();
    // The series' patches after the kernel's own, as `git am` applies them.
    std::vector<core::StoredFile> patches = record.patches;
    patches.insert(patches.end(), record.series.begin(), record.series.end());
    for (const core::StoredFile& patch : patches) {
        // By content: two patches of one name in different folders stay apart.
        fs::path path =
            inputs / "patches" /
            (patch.sha256.substr(0, 16) + "-" + fs::path(patch.name).filename().string());
        RIG_TRY(write_input(path, patch));
        kernel.patches.push_back(path.string());
    }
    return kernel;
}

} // namespace

Expected<std::vector<core::CellRecord>> freeze(const core::Scenario& scenario,
                                               const std::vector<core::Cell>& cells,
                                               const ResolveRef& resolve) {
    fs::path dir = scenario.dir.empty() ? fs::current_path() : fs::path(scenario.dir);
    Lookups lookups;
    std::vector<core::CellRecord> records;
    for (const core::Cell& cell : cells) {
        core::CellRecord record;
        record.cell = cell;
        record.kernel = scenario.kernels.at(cell.kernel);
        if (record.kernel.source == core::KernelSource::git)
            RIG_TRY(freeze_git(scenario, record, dir, lookups, resolve));
        record.workload = scenario.workload;
        // As the run loop read them: a tree from where rig runs, a module beside the
        // scenario.
        record.workload.tree = absolute_in(fs::current_path(), record.workload.tree);
        record.workload.module = absolute_in(dir, record.workload.module);
        record.guest = scenario.guest;
        record.timeouts = scenario.timeouts;
        records.push_back(std::move(record));
    }
    return records;
}

Expected<Thawed> thaw(core::Scenario settings, const std::vector<core::CellRecord>& records,
                      const fs::path& inputs) {
    Thawed out{std::move(settings), {}};
    core::Scenario& scenario = out.scenario;
    scenario.dir = inputs.string();
    scenario.kernels.clear();
    std::map<std::string, std::string> fragments; // name -> text, one per name in a run
    for (const core::CellRecord& record : records) {
        for (const core::StoredFile& fragment : record.fragments) {
            auto [it, added] = fragments.emplace(fragment.name, fragment.text);
            if (!added && it->second != fragment.text)
                return fail(ErrorKind::infra,
                            "the stored cells hold two texts of fragment " + fragment.name);
            RIG_TRY(write_input(inputs / (fragment.name + ".config"), fragment));
        }
        core::Kernel kernel = RIG_TRY(thaw_kernel(record, inputs));
        // Cells of one entry share it; an entry at two commits is two entries.
        auto same = [&](const core::Kernel& other) {
            return other.canonical() == kernel.canonical();
        };
        auto found = std::find_if(scenario.kernels.begin(), scenario.kernels.end(), same);
        core::Cell cell = record.cell;
        cell.kernel = static_cast<size_t>(found - scenario.kernels.begin());
        if (found == scenario.kernels.end())
            scenario.kernels.push_back(std::move(kernel));
        out.cells.push_back(std::move(cell));
    }
    if (!records.empty()) {
        // One workload, guest shape and timeouts per run: every record holds the same.
        scenario.workload = records.front().workload;
        scenario.guest = records.front().guest;
        scenario.timeouts = records.front().timeouts;
    }
    return out;
}

core::CellRecord sample_record(const core::Scenario& scenario, const core::Cell& cell) {
    core::CellRecord record;
    record.cell = cell;
    record.workload = scenario.workload;
    record.guest = scenario.guest;
    record.timeouts = scenario.timeouts;
    return record;
}

core::Scenario sample_scenario(const core::CellRecord& record) {
    core::Scenario scenario;
    scenario.workload = record.workload;
    scenario.guest = record.guest;
    scenario.timeouts = record.timeouts;
    return scenario;
}

} // namespace rig::run
