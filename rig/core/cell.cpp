// SPDX-License-Identifier: MIT
// Cell identity.
#include "core/cell.hpp"

#include "util/hash.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace rig::core {

const Filesystem& Cell::fs() const {
    const Filesystem* fs = find_fs(param("fs"));
    return fs ? *fs : default_fs();
}

std::optional<uint64_t> Cell::msize() const {
    auto it = params.find("msize");
    if (it == params.end())
        return std::nullopt;
    return std::stoull(it->second);
}

std::string Cell::cache() const {
    return param("cache");
}

std::string Cell::param(const std::string& axis) const {
    auto it = params.find(axis);
    return it == params.end() ? std::string() : it->second;
}

std::vector<std::string> Cell::param_pairs() const {
    std::vector<std::string> out;
    for (const auto& [key, value] : params)
        out.push_back(key + "=" + value);
    return out;
}

std::string Cell::label() const {
    std::string out = kernel_name + " " + config;
    for (const std::string& pair : param_pairs())
        out += " " + pair;
    return out;
}

Expected<bool> cell_matches(const Cell& cell, std::string_view filter) {
    if (filter.find('=') == std::string_view::npos)
        return !filter.empty() && util::starts_with(cell.id, filter);
    bool match = true;
    for (const std::string& pair : util::split(filter, ',')) {
        auto equals = pair.find('=');
        if (equals == std::string::npos)
            return fail(ErrorKind::usage,
                        "--cell " + std::string(filter) + ": '" + pair + "' is not KEY=VALUE");
        std::string key(util::trim(pair.substr(0, equals)));
        std::string value(util::trim(pair.substr(equals + 1)));
        std::string have = key == "kernel"   ? cell.kernel_name
                           : key == "config" ? cell.config
                           : key == "cell"   ? cell.id
                                             : cell.param(key);
        match &= have == value;
    }
    return match;
}

bool cell_matches_any(const Cell& cell, const std::vector<std::string>& filters) {
    return filters.empty() ||
           std::any_of(filters.begin(), filters.end(), [&](const std::string& filter) {
               return cell_matches(cell, filter).value_or(false);
           });
}

namespace {

std::string config_label(const Kernel& kernel, const std::map<std::string, std::string>& params) {
    switch (kernel.source) {
    case KernelSource::debian:
        return "debian";
    case KernelSource::image:
        return "image";
    case KernelSource::git:
        break;
    }
    if (auto it = params.find("config"); it != params.end())
        return it->second;
    std::vector<std::string> named;
    std::copy_if(kernel.config.begin(), kernel.config.end(), std::back_inserter(named),
                 [](const std::string& fragment) { return fragment != "base"; });
    return named.empty() ? "base" : util::join(named, "+");
}

} // namespace

Cell make_cell(const Scenario& scenario, size_t kernel_index,
               std::map<std::string, std::string> params) {
    const Kernel& kernel = scenario.kernels.at(kernel_index);
    Cell cell;
    cell.kernel = kernel_index;
    cell.kernel_name = kernel.name;
    cell.config = config_label(kernel, params);
    if (kernel.source == KernelSource::git) {
        cell.fragments = kernel.config;
        if (auto it = params.find("config"); it != params.end())
            cell.fragments.push_back(it->second);
    }
    cell.params = std::move(params);

    // std::map iterates sorted, so YAML key order cannot leak into the id.
    std::string rest;
    for (const auto& [axis, value] : cell.params)
        rest += ";" + axis + "=" + value;
    rest += ";workload{" + scenario.workload.canonical() + "}";
    rest += ";guest{" + scenario.guest.canonical() + "}";
    cell.canonical = "kernel{" + kernel.canonical() + "}" + rest;
    cell.id = util::sha256_hex(cell.canonical).substr(0, 12);
    Kernel any_revision = kernel;
    any_revision.ref.clear();
    cell.key = util::sha256_hex("kernel{" + any_revision.canonical() + "}" + rest).substr(0, 12);
    return cell;
}

const Cell* twin_of(const Cell& cell, const std::vector<Cell>& cells, const std::string& axis,
                    const std::string& value) {
    if (cell.param(axis) == value)
        return nullptr;
    auto others = [&](const Cell& c) {
        std::map<std::string, std::string> params = c.params;
        params.erase(axis);
        return params;
    };
    for (const Cell& other : cells)
        if (other.param(axis) == value && other.kernel == cell.kernel &&
            other.config == cell.config && other.fragments == cell.fragments &&
            others(other) == others(cell))
            return &other;
    return nullptr;
}

} // namespace rig::core
