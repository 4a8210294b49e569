// SPDX-License-Identifier: MIT
// Canonical texts of scenario parts; they feed cell ids, so changing one changes every id.
#include "core/scenario.hpp"

#include "util/strings.hpp"

#include <algorithm>

namespace rig::core {

std::string_view to_string(KernelSource source) {
    switch (source) {
    case KernelSource::debian:
        return "debian";
    case KernelSource::image:
        return "image";
    case KernelSource::git:
        return "git";
    }
    return "?";
}

std::string_view to_string(Accel accel) {
    switch (accel) {
    case Accel::auto_detect:
        return "auto";
    case Accel::kvm:
        return to_string(Accelerator::kvm);
    case Accel::tcg:
        return to_string(Accelerator::tcg);
    }
    return "?";
}

std::optional<Accel> parse_accel(std::string_view text) {
    for (Accel accel : {Accel::auto_detect, Accel::kvm, Accel::tcg})
        if (to_string(accel) == text)
            return accel;
    return std::nullopt;
}

std::vector<std::string> accel_words() {
    std::vector<std::string> words;
    for (Accel accel : {Accel::auto_detect, Accel::kvm, Accel::tcg})
        words.emplace_back(to_string(accel));
    return words;
}

std::string_view to_string(Change change) {
    switch (change) {
    case Change::rewrite:
        return "rewrite";
    case Change::append:
        return "append";
    case Change::rename:
        return "rename";
    case Change::remove:
        return "delete";
    }
    return "?";
}

const std::vector<Change>& all_changes() {
    static const std::vector<Change> k_changes{Change::rewrite, Change::append, Change::rename,
                                               Change::remove};
    return k_changes;
}

std::optional<Change> parse_change(std::string_view text) {
    for (Change change : all_changes())
        if (to_string(change) == text)
            return change;
    return std::nullopt;
}

std::vector<std::string> change_words() {
    std::vector<std::string> words;
    for (Change change : all_changes())
        words.emplace_back(to_string(change));
    return words;
}

std::string stale_metric(std::optional<Change> change, std::string_view figure) {
    std::string name(k_stale_prefix);
    if (change)
        name += std::string(to_string(*change)) + ".";
    return name + std::string(figure);
}

// The one place the accelerators' words are spelled.
std::string_view to_string(Accelerator accelerator) {
    switch (accelerator) {
    case Accelerator::kvm:
        return "kvm";
    case Accelerator::tcg:
        return "tcg";
    }
    return "?";
}

Expected<Accelerator> parse_accelerator(std::string_view text) {
    for (Accelerator accelerator : {Accelerator::kvm, Accelerator::tcg})
        if (to_string(accelerator) == text)
            return accelerator;
    return fail(ErrorKind::infra, "'" + std::string(text) + "' is not an accelerator (kvm, tcg)");
}

std::string_view to_string(Machine machine) {
    switch (machine) {
    case Machine::q35:
        return "q35";
    case Machine::microvm:
        return "microvm";
    }
    return "?";
}

bool is_debian_series(std::string_view name) {
    constexpr std::string_view k_prefix = "linux-image-";
    if (!util::starts_with(name, k_prefix))
        return false;
    std::string_view version = name.substr(k_prefix.size());
    size_t dot = version.find('.');
    auto digits = [](std::string_view text) {
        return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
    };
    return dot != std::string_view::npos && digits(version.substr(0, dot)) &&
           digits(version.substr(dot + 1));
}

std::string Kernel::canonical() const {
    std::string out = "name=" + name + ";";
    switch (source) {
    case KernelSource::debian:
        out += "debian=" + package;
        // Only when given, so that the ids of scenarios written before flavours stay.
        if (!flavour.empty())
            out += ";flavour=" + flavour;
        break;
    case KernelSource::image:
        out += "image=" + image + ";modules=" + modules;
        if (!build.empty())
            out += ";build=" + build;
        break;
    case KernelSource::git:
        out += "git=" + repo + ";ref=" + ref + ";config=" + util::join(config, ",") +
               ";patches=" + util::join(patches, ",") + ";options=";
        for (const auto& [option, value] : options)
            out += option + "=" + value + ",";
        // Only when given, so that the ids of scenarios written before series stay.
        if (!series.empty())
            out += ";series=" + series;
        break;
    }
    return out;
}

std::string Workload::canonical() const {
    // Phases are appended only when there are some, so that the cells of scenarios
    // written before phases keep their ids.
    std::string steps = "command=" + command;
    if (!phases.empty()) {
        steps = "phases=";
        for (const WorkloadPhase& phase : phases)
            steps +=
                phase.name + ":" + std::to_string(phase.command.size()) + ":" + phase.command + ";";
    }
    // Only when given, so that the ids of scenarios written before outputs stay.
    if (!outputs.empty())
        steps += ";outputs=" + util::join(outputs, ",");
    if (coherency.enabled()) {
        steps += ";coherency=";
        for (Change change : coherency.changes)
            steps += std::string(to_string(change)) + ",";
        steps += "window:" + std::to_string(coherency.window.count());
    }
    if (!check_after.empty())
        steps += ";check_after=" + util::join(check_after, ",");
    switch (kind) {
    case WorkloadKind::generate:
        return "generate:units=" + std::to_string(generate.units) +
               ",headers=" + std::to_string(generate.headers) +
               ",functions=" + std::to_string(generate.functions) + ";" + steps;
    case WorkloadKind::tree:
        return "tree=" + tree + ";" + steps;
    case WorkloadKind::command:
        return steps;
    case WorkloadKind::module: {
        std::string out = "module=" + module + ";params=";
        for (const auto& [name, value] : module_params)
            out += name + "=" + value + ",";
        return out;
    }
    case WorkloadKind::readback:
        return "readback:files=" + std::to_string(readback.files) +
               ",bytes=" + std::to_string(readback.bytes) + ";" + steps;
    }
    return {};
}

std::vector<std::string> paused_phases(const Workload& workload) {
    std::vector<std::string> paused;
    for (size_t i = 0; i + 1 < workload.phases.size(); ++i) {
        const std::string& name = workload.phases[i].name;
        if (std::find(workload.check_after.begin(), workload.check_after.end(), name) !=
            workload.check_after.end())
            paused.push_back(name);
    }
    return paused;
}

std::vector<std::string> checks(const Workload& workload) {
    std::vector<std::string> all = paused_phases(workload);
    all.emplace_back();
    return all;
}

std::string check_prefix(const Workload& workload, const std::string& check) {
    if (workload.check_after.empty())
        return {};
    if (!check.empty())
        return check + "/";
    return workload.phases.empty() ? std::string() : workload.phases.back().name + "/";
}

std::vector<std::string> output_globs(const Workload& workload) {
    if (!workload.outputs.empty())
        return workload.outputs;
    switch (workload.kind) {
    case WorkloadKind::generate:
        return {"prog", "*.o", "units/*.o"};
    case WorkloadKind::readback:
        return {"readback/*"};
    default:
        return {};
    }
}

bool is_output_glob(std::string_view glob) {
    if (glob.empty() || glob.size() > 200 || glob.front() == '/' ||
        glob.find("..") != std::string_view::npos)
        return false;
    for (char c : glob)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '*' || c == '?' || c == '/' || c == '-'))
            return false;
    // The shell's `.*` and `.?` match `..`: a dot file is named, not matched.
    for (const std::string& part : util::split(std::string(glob), '/'))
        if (part.empty() || part == "." ||
            (part.front() == '.' && part.find_first_of("*?") != std::string::npos))
            return false;
    return true;
}

std::string Guest::canonical() const {
    // The accelerator is recorded per sample, not part of the cell: the same
    // matrix must compare across a KVM laptop and a TCG CI machine.
    std::string out = "memory=" + std::to_string(memory_mib) + "M;cpus=" + std::to_string(cpus);
    // Only when asked for, so that the cells of scenarios without a disk keep their ids.
    if (scratch_bytes != 0)
        out += ";scratch=" + std::to_string(scratch_bytes);
    for (const std::string& path : host_paths)
        out += ";host_path=" + path;
    for (const std::string& entry : profile)
        out += ";profile=" + entry;
    return out;
}

bool is_phase_name(std::string_view name) {
    if (name.empty() || name.size() > k_max_phase_name)
        return false;
    // Explicit ranges: <cctype> would depend on the locale.
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    return true;
}

} // namespace rig::core
