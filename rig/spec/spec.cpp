// SPDX-License-Identifier: MIT
// Scenario YAML to core::Scenario: the top-level keys read in order, then the whole scenario
// checked and expanded; yaml-cpp's exceptions stop here.
#include "spec/spec.hpp"

#include "core/diagnostic.hpp"
#include "core/matrix.hpp"
#include "spec/backend.hpp"
#include "spec/guest.hpp"
#include "spec/indentation.hpp"
#include "spec/kernels.hpp"
#include "spec/keys.hpp"
#include "spec/matrix.hpp"
#include "spec/reader_context.hpp"
#include "spec/watch.hpp"
#include "spec/workload.hpp"
#include "spec/yaml_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>
#include <yaml-cpp/depthguard.h>

namespace rig::spec {

namespace {

using core::Located;

// A git kernel with a series is measured without and with it unless the matrix says
// which: the series' effect is what the table is for.
void add_series_axis(core::Scenario& scenario) {
    bool any = std::any_of(scenario.kernels.begin(), scenario.kernels.end(),
                           [](const core::Kernel& kernel) { return !kernel.series.empty(); });
    bool written = std::any_of(scenario.matrix.begin(), scenario.matrix.end(),
                               [](const core::AxisValues& axis) { return axis.name == "series"; });
    if (!any || written)
        return;
    core::AxisValues axis;
    axis.name = "series";
    axis.loc = scenario.matrix_loc;
    for (const char* value : {"without", "with"})
        axis.values.push_back({value, scenario.matrix_loc, "matrix.series"});
    scenario.matrix.push_back(std::move(axis));
}

Expected<core::Scenario> read_scenario(const Context& context, const YAML::Node& root,
                                       std::string_view text) {
    if (!root.IsMap())
        return error_at(context, root, "",
                        "the top level must be a map of keys (name, kernels, matrix, ...), got " +
                            describe(root));
    std::vector<Entry> entries = RIG_TRY(read_map(context, root, "", &k_top_keys));
    core::Scenario scenario;
    scenario.file = context.file;
    scenario.text = std::string(text);

    const Entry* name = find_entry(entries, "name");
    if (!name)
        return error_at(context, root, "name", "missing required key");
    Located name_value = RIG_TRY(read_scalar(context, name->value, name->path, "a name"));
    // The name becomes part of folder and report names.
    if (!is_word(name_value.value, "._-"))
        return error_at(context, name_value,
                        "scenario names use only letters, digits, '.', '_' and '-', got '" +
                            name_value.value + "'");
    scenario.name = name_value.value;

    const Entry* kernels = find_entry(entries, "kernels");
    if (!kernels)
        return error_at(context, root, "kernels", "missing required key");
    scenario.kernels = RIG_TRY(read_kernels(context, *kernels));

    scenario.matrix_loc = loc_of(root);
    if (const Entry* matrix = find_entry(entries, "matrix")) {
        scenario.matrix_loc = loc_of(matrix->value);
        scenario.matrix = RIG_TRY(read_matrix(context, *matrix));
    }
    add_series_axis(scenario);
    if (const Entry* exclude = find_entry(entries, "exclude"))
        scenario.exclude = RIG_TRY(read_rules(context, *exclude, scenario.kernels));
    if (const Entry* include = find_entry(entries, "include"))
        scenario.include = RIG_TRY(read_rules(context, *include, scenario.kernels));

    scenario.workload.command = k_default_generate_command;
    if (const Entry* workload = find_entry(entries, "workload"))
        scenario.workload = RIG_TRY(read_workload(context, *workload));
    if (scenario.workload.kind == core::WorkloadKind::module)
        for (const core::Kernel& kernel : scenario.kernels)
            if (kernel.source == core::KernelSource::image && kernel.build.empty())
                return core::config_error(context.file, kernel.loc, kernel.path + ".build",
                                          "a module workload needs the build folder of image "
                                          "kernel '" +
                                              kernel.name +
                                              "' (the O= folder it was built in, or its headers)");
    if (const Entry* repeat = find_entry(entries, "repeat"))
        scenario.repeat =
            static_cast<int>(RIG_TRY(read_integer(context, repeat->value, repeat->path, 1, 1000)));
    if (const Entry* warmup = find_entry(entries, "warmup"))
        scenario.warmup =
            static_cast<int>(RIG_TRY(read_integer(context, warmup->value, warmup->path, 0, 1000)));
    if (const Entry* jobs = find_entry(entries, "jobs")) {
        scenario.jobs =
            static_cast<int>(RIG_TRY(read_integer(context, jobs->value, jobs->path, 1, 1024)));
        scenario.jobs_loc = loc_of(jobs->value);
    }
    if (const Entry* guest = find_entry(entries, "guest"))
        scenario.guest = RIG_TRY(read_guest(context, *guest));
    if (const Entry* timeouts = find_entry(entries, "timeouts"))
        scenario.timeouts = RIG_TRY(read_timeouts(context, *timeouts));
    RIG_TRY(read_backend(context, entries, scenario));
    if (const Entry* watch = find_entry(entries, "watch"))
        scenario.watch = RIG_TRY(read_watch(context, *watch, scenario.kernels));
    if (scenario.workload.kind == core::WorkloadKind::module &&
        scenario.backend == core::Backend::slurm)
        return core::config_error(context.file, scenario.slurm.loc, "backend",
                                  "a module workload runs on backends qemu and libvirt; a "
                                  "Slurm job does not carry the built module yet");

    RIG_TRY(check_cache_covers_fs(context, scenario));
    RIG_TRY(check_size(context, scenario));
    // Expanding here makes parse the one place that reports scenario errors, including
    // those only the whole matrix reveals (a cache invalid for its fs, nothing left).
    RIG_TRY(core::expand(scenario));
    return scenario;
}

core::Loc loc_of_offset(std::string_view text, size_t offset) {
    core::Loc loc{1, 1};
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++loc.line;
            loc.column = 1;
        } else {
            ++loc.column;
        }
    }
    return loc;
}

Expected<core::Scenario> parse_text(const Context& context, std::string_view text) {
    // yaml-cpp reads a NUL as an ordinary character; a NUL means a binary file was given.
    if (size_t nul = text.find('\0'); nul != std::string_view::npos)
        return core::config_error(context.file, loc_of_offset(text, nul), "",
                                  "contains a NUL byte; is this a YAML text file?");
    YAML::Node root = RIG_TRY(load_document(context, std::string(text)));
    if (root.IsNull())
        return core::config_error(context.file, {1, 1}, "",
                                  "the file is empty; a scenario needs at least name and kernels");
    return read_scenario(context, root, text);
}

// yaml-cpp reports through exceptions; they stop here, as the folder's contract says.
Expected<core::Scenario> parse_guarded(const Context& context, std::string_view text) {
    try {
        return parse_text(context, text);
    } catch (const YAML::DeepRecursion& e) {
        return core::config_error(context.file, loc_of(e.mark), "",
                                  "nesting too deep (more than " + std::to_string(e.depth()) +
                                      " levels)");
    } catch (const YAML::ParserException& e) {
        return core::config_error(context.file, loc_of(e.mark), "", "YAML syntax error: " + e.msg);
    } catch (const YAML::Exception& e) {
        return core::config_error(context.file, loc_of(e.mark), "", "cannot read YAML: " + e.msg);
    } catch (const std::exception& e) {
        return core::config_error(context.file, {}, "", std::string("cannot parse: ") + e.what());
    }
}

} // namespace

Expected<core::Scenario> parse_scenario(std::string_view text, const std::string& file_label) {
    Context context{file_label};
    auto scenario = parse_guarded(context, text);
    // yaml-cpp names a tab in indentation as something else ("illegal map value"), past
    // it; a file that parses used its tabs where YAML allows them.
    if (!scenario) {
        if (auto tab = tab_in_indentation(text))
            return core::config_error(context.file, *tab, "",
                                      "a tab in indentation (YAML indents with spaces)");
        return scenario;
    }
    scenario->dir = std::filesystem::absolute(file_label).parent_path().string();
    return scenario;
}

Expected<core::Scenario> load_scenario(const std::filesystem::path& file) {
    // POSIX calls rather than iostreams: they give the errno to report, including EISDIR.
    std::string label = file.string();
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(ErrorKind::config, label + ": cannot read: " + std::strerror(errno));
    std::string text;
    char buffer[65536];
    while (true) {
        ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int saved = errno;
            ::close(fd);
            return fail(ErrorKind::config, label + ": cannot read: " + std::strerror(saved));
        }
        if (got == 0)
            break;
        text.append(buffer, static_cast<size_t>(got));
    }
    ::close(fd);
    return parse_scenario(text, label);
}

} // namespace rig::spec
