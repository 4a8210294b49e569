// SPDX-License-Identifier: MIT
// Every key a scenario file may hold, map by map: the lists the reader checks keys against,
// public so that a test holds them against scenarios/README.md (and so rig-scenario(5)).
#pragma once

#include <string>
#include <vector>

namespace rig::spec {

extern const std::vector<std::string> k_top_keys;
extern const std::vector<std::string> k_kernel_keys;
extern const std::vector<std::string> k_workload_keys;
extern const std::vector<std::string> k_generate_keys;
extern const std::vector<std::string> k_readback_keys;
extern const std::vector<std::string> k_coherency_keys;
extern const std::vector<std::string> k_guest_keys;
extern const std::vector<std::string> k_timeout_keys;
extern const std::vector<std::string> k_slurm_keys;
extern const std::vector<std::string> k_watch_keys;

// The keys of one map and the README section that documents them, by its heading
// ("`guest`"; "Top-level keys" for the top level).
struct KeyGroup {
    std::string section;
    std::vector<std::string> keys;
};

// Every map the reader knows the keys of: the lists above, the matrix's axes, and what
// exclude and include rules take besides the axes (`kernel`).
std::vector<KeyGroup> key_groups();

// The keys an exclude or include rule may name: every axis, and `kernel`.
const std::vector<std::string>& rule_keys();

} // namespace rig::spec
