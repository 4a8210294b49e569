// SPDX-License-Identifier: MIT
// Module closure from modules.dep.
#include "guest/modules.hpp"

#include "util/file.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace rig::guest {

namespace {

std::string normalise(std::string name) {
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

// Each module's path -> its direct dependencies, for lookups.
std::map<std::string, const std::vector<std::string>*> deps_by_path(const ModuleIndex& index) {
    std::map<std::string, const std::vector<std::string>*> by_path;
    for (const auto& entry : index.deps)
        by_path[entry.first] = &entry.second;
    return by_path;
}

} // namespace

std::string module_name(std::string_view path) {
    size_t slash = path.rfind('/');
    if (slash != std::string_view::npos)
        path.remove_prefix(slash + 1);
    size_t dot = path.find(".ko");
    return normalise(std::string(path.substr(0, dot)));
}

ModuleIndex parse_module_index(std::string_view modules_dep, std::string_view modules_builtin) {
    ModuleIndex index;
    for (const std::string& line : util::split(modules_dep, '\n')) {
        size_t colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        std::vector<std::string> deps;
        for (const std::string& dep : util::split(util::trim(line.substr(colon + 1)), ' '))
            if (!dep.empty())
                deps.push_back(dep);
        index.deps.emplace_back(std::string(util::trim(line.substr(0, colon))), std::move(deps));
    }
    for (const std::string& line : util::split(modules_builtin, '\n'))
        if (!util::trim(line).empty())
            index.builtin.push_back(module_name(util::trim(line)));
    return index;
}

Expected<ModuleIndex> read_module_index(const std::filesystem::path& modules_dir) {
    auto dep_file = modules_dir / "modules.dep";
    if (!std::filesystem::exists(dep_file))
        return fail(ErrorKind::infra, "no modules.dep in " + modules_dir.string());
    return parse_module_index(util::read_file(dep_file),
                              util::read_file(modules_dir / "modules.builtin"));
}

Expected<std::vector<std::string>> load_order(const ModuleIndex& index,
                                              const std::vector<std::string>& wanted) {
    std::map<std::string, const std::pair<std::string, std::vector<std::string>>*> by_name;
    for (const auto& entry : index.deps)
        by_name[module_name(entry.first)] = &entry;
    const auto by_path = deps_by_path(index);
    std::set<std::string> builtin(index.builtin.begin(), index.builtin.end());

    std::vector<std::string> order;
    std::set<std::string> visited;
    // modules.dep lists each module's whole closure, deepest last, so loading that list
    // in reverse and then the module is what modprobe does; a depth-first walk gives
    // the same order and copes with lists that are not closed.
    auto visit = [&](auto&& self, const std::string& path) -> void {
        if (!visited.insert(path).second)
            return;
        if (auto it = by_path.find(path); it != by_path.end())
            for (auto dep = it->second->rbegin(); dep != it->second->rend(); ++dep)
                self(self, *dep);
        order.push_back(path);
    };
    for (const std::string& name : wanted) {
        std::string key = normalise(name);
        if (auto it = by_name.find(key); it != by_name.end())
            visit(visit, it->second->first);
        else if (!builtin.count(key))
            return fail(ErrorKind::infra,
                        "kernel module '" + name + "' is neither built in nor in modules.dep");
    }
    return order;
}

std::vector<std::vector<std::string>> load_waves(const ModuleIndex& index,
                                                 const std::vector<std::string>& order) {
    const auto deps = deps_by_path(index);
    std::map<std::string, size_t> wave_of;
    std::vector<std::vector<std::string>> waves;
    for (const std::string& path : order) {
        size_t wave = 0;
        if (auto it = deps.find(path); it != deps.end())
            for (const std::string& dep : *it->second)
                if (auto known = wave_of.find(dep); known != wave_of.end())
                    wave = std::max(wave, known->second + 1);
        wave_of[path] = wave;
        if (waves.size() <= wave)
            waves.resize(wave + 1);
        waves[wave].push_back(path);
    }
    return waves;
}

std::string_view without_signature(std::string_view module) {
    // What follows the signature: struct module_signature (algo, hash, id_type, signer_len,
    // key_id_len, 3 pad bytes, big-endian sig_len) and the marker (include/linux/
    // module_signature.h).
    constexpr std::string_view k_marker = "~Module signature appended~\n";
    constexpr size_t k_info = 12;
    if (!module.ends_with(k_marker) || module.size() < k_marker.size() + k_info)
        return module;
    auto info = module.substr(module.size() - k_marker.size() - k_info, k_info);
    auto byte = [&](size_t i) {
        return static_cast<uint64_t>(static_cast<unsigned char>(info[i]));
    };
    uint64_t signature = (byte(8) << 24) | (byte(9) << 16) | (byte(10) << 8) | byte(11);
    uint64_t appended = k_marker.size() + k_info + signature + byte(3) + byte(4);
    if (appended > module.size())
        return module;
    return module.substr(0, module.size() - appended);
}

} // namespace rig::guest
