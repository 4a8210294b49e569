// SPDX-License-Identifier: MIT
#include "host/topology.hpp"

#include "util/file.hpp"

#include <algorithm>
#include <map>
#include <sched.h>
#include <string>

namespace rig::host {

namespace fs = std::filesystem;

namespace {

int read_int(const fs::path& file, int fallback) {
    std::string text = util::read_file(file);
    try {
        return text.empty() ? fallback : std::stoi(text);
    } catch (const std::exception&) {
        return fallback;
    }
}

// Node folders list their CPUs; a host without NUMA has node0 only, or no node folder.
std::map<int, int> node_of_cpu(const fs::path& sys) {
    std::map<int, int> nodes;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(sys / "node", ec)) {
        std::string name = entry.path().filename().string();
        if (name.rfind("node", 0) != 0 || name.size() == 4)
            continue;
        int node = 0;
        try {
            node = std::stoi(name.substr(4));
        } catch (const std::exception&) {
            continue;
        }
        if (auto cpus = core::parse_cpu_list(util::read_file(entry.path() / "cpulist")))
            for (int cpu : *cpus)
                nodes[cpu] = node;
    }
    return nodes;
}

} // namespace

std::vector<core::HostCpu> cpus_from_sysfs(const fs::path& sys, const core::CpuSet& allowed) {
    core::CpuSet online = allowed;
    if (std::string text = util::read_file(sys / "cpu" / "online"); !text.empty())
        if (auto listed = core::parse_cpu_list(text)) {
            online.clear();
            for (int cpu : allowed)
                if (std::binary_search(listed->begin(), listed->end(), cpu))
                    online.push_back(cpu);
        }
    std::map<int, int> nodes = node_of_cpu(sys);
    std::vector<core::HostCpu> cpus;
    for (int id : online) {
        fs::path topology = sys / "cpu" / ("cpu" + std::to_string(id)) / "topology";
        core::HostCpu cpu;
        cpu.id = id;
        // Without its files a CPU is a core of its own: a core id no real one has.
        cpu.core = read_int(topology / "core_id", -1 - id);
        cpu.package = read_int(topology / "physical_package_id", 0);
        cpu.node = nodes.count(id) ? nodes.at(id) : 0;
        cpus.push_back(cpu);
    }
    return cpus;
}

std::vector<core::HostCpu> local_cpus(const fs::path& sys) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    core::CpuSet allowed;
    if (::sched_getaffinity(0, sizeof(mask), &mask) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &mask))
                allowed.push_back(cpu);
    }
    return cpus_from_sysfs(sys, allowed);
}

} // namespace rig::host
