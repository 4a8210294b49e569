// SPDX-License-Identifier: MIT
#include "core/cpu_set.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <tuple>

namespace rig::core {

std::string cpu_list_text(const CpuSet& cpus) {
    std::vector<std::string> ranges;
    for (size_t i = 0; i < cpus.size();) {
        size_t end = i;
        while (end + 1 < cpus.size() && cpus[end + 1] == cpus[end] + 1)
            ++end;
        ranges.push_back(end == i ? std::to_string(cpus[i])
                                  : std::to_string(cpus[i]) + "-" + std::to_string(cpus[end]));
        i = end + 1;
    }
    return util::join(ranges, ",");
}

std::string cpu_sets_text(const std::vector<CpuSet>& sets) {
    std::vector<std::string> texts;
    for (const CpuSet& set : sets)
        texts.push_back(cpu_list_text(set));
    return util::join(texts, " | ");
}

namespace {

std::optional<int> parse_cpu(std::string_view text) {
    int value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 0)
        return std::nullopt;
    return value;
}

} // namespace

Expected<CpuSet> parse_cpu_list(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.remove_suffix(1);
    CpuSet cpus;
    for (const std::string& range : util::split(std::string(text), ',')) {
        if (range.empty())
            continue;
        size_t dash = range.find('-');
        auto first = parse_cpu(std::string_view(range).substr(0, dash));
        auto last =
            dash == std::string::npos ? first : parse_cpu(std::string_view(range).substr(dash + 1));
        if (!first || !last || *last < *first)
            return fail(ErrorKind::config, "not a CPU list: \"" + std::string(text) + "\"");
        for (int cpu = *first; cpu <= *last; ++cpu)
            cpus.push_back(cpu);
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

size_t reserved_cores(size_t cores) {
    return cores / 8;
}

namespace {

struct Core {
    int node = 0;
    CpuSet cpus;
};

// The host's cores in node, package and core order, each with its CPUs.
std::vector<Core> cores_of(const std::vector<HostCpu>& cpus) {
    std::map<std::tuple<int, int, int>, Core> by_core;
    for (const HostCpu& cpu : cpus) {
        Core& core = by_core[{cpu.node, cpu.package, cpu.core}];
        core.node = cpu.node;
        core.cpus.push_back(cpu.id);
    }
    std::vector<Core> cores;
    for (auto& [key, core] : by_core) {
        std::sort(core.cpus.begin(), core.cpus.end());
        cores.push_back(std::move(core));
    }
    return cores;
}

// Takes free cores of one node (any node when `node` is negative) until they hold
// `guest_cpus` CPUs; nothing is taken when they cannot.
std::optional<CpuSet> take_cores(std::vector<Core>& free, int guest_cpus, int node) {
    std::vector<size_t> picked;
    size_t held = 0;
    for (size_t i = 0; i < free.size() && held < static_cast<size_t>(guest_cpus); ++i) {
        if (node >= 0 && free[i].node != node)
            continue;
        picked.push_back(i);
        held += free[i].cpus.size();
    }
    if (held < static_cast<size_t>(guest_cpus))
        return std::nullopt;
    CpuSet set;
    for (size_t i : picked)
        set.insert(set.end(), free[i].cpus.begin(), free[i].cpus.end());
    for (auto i = picked.rbegin(); i != picked.rend(); ++i)
        free.erase(free.begin() + static_cast<std::ptrdiff_t>(*i));
    std::sort(set.begin(), set.end());
    return set;
}

std::optional<std::vector<CpuSet>> place(const std::vector<HostCpu>& cpus, int guest_cpus,
                                         int jobs) {
    std::vector<Core> free = cores_of(cpus);
    free.erase(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                reserved_cores(free.size()), free.size())));
    std::vector<CpuSet> sets;
    for (int job = 0; job < jobs; ++job) {
        // The first node with room, in node order; a guest spans nodes only when none has.
        std::optional<CpuSet> set;
        for (size_t i = 0; i < free.size() && !set; ++i)
            set = take_cores(free, guest_cpus, free[i].node);
        if (!set)
            set = take_cores(free, guest_cpus, -1);
        if (!set)
            return std::nullopt;
        sets.push_back(std::move(*set));
    }
    return sets;
}

} // namespace

Expected<std::vector<CpuSet>> choose_cpu_sets(const std::vector<HostCpu>& cpus, int guest_cpus,
                                              int jobs) {
    if (jobs < 1 || guest_cpus < 1)
        return fail(ErrorKind::usage, "--jobs and guest.cpus must be at least 1");
    if (auto sets = place(cpus, guest_cpus, jobs))
        return *sets;
    int fits = jobs - 1;
    while (fits > 0 && !place(cpus, guest_cpus, fits))
        --fits;
    size_t cores = cores_of(cpus).size();
    CpuSet all;
    for (const HostCpu& cpu : cpus)
        all.push_back(cpu.id);
    std::sort(all.begin(), all.end());
    std::string offer = "this host offers " + std::to_string(all.size()) + " CPUs (" +
                        cpu_list_text(all) + ") on " + std::to_string(cores) + " cores, " +
                        std::to_string(reserved_cores(cores)) + " of them kept for rig";
    std::string need = std::to_string(jobs) + " guests at once need " + std::to_string(jobs) +
                       " x " + std::to_string(guest_cpus) +
                       " CPUs (guest.cpus) on cores of their own";
    if (fits == 0)
        return fail(ErrorKind::usage,
                    need + ", but " + offer + ": not one guest fits; lower guest.cpus");
    return fail(ErrorKind::usage, need + ", but " + offer + ": at most " + std::to_string(fits) +
                                      " at once fit (--jobs " + std::to_string(fits) + ")");
}

} // namespace rig::core
