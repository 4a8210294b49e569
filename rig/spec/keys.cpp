// SPDX-License-Identifier: MIT
// The keys of every scenario map, in one place.
#include "spec/keys.hpp"

#include "core/axis.hpp"

#include <algorithm>

namespace rig::spec {

const std::vector<std::string> k_top_keys{
    "name",  "kernels",  "matrix",  "exclude", "include", "workload", "repeat", "warmup",
    "guest", "timeouts", "backend", "uri",     "hosts",   "slurm",    "jobs",   "watch"};
const std::vector<std::string> k_kernel_keys{"name",    "debian",  "flavour", "image",
                                             "modules", "build",   "git",     "ref",
                                             "config",  "patches", "series",  "options"};
const std::vector<std::string> k_workload_keys{"generate",  "tree",       "command",  "phases",
                                               "module",    "params",     "readback", "outputs",
                                               "coherency", "check_after"};
const std::vector<std::string> k_generate_keys{"units", "headers", "functions"};
const std::vector<std::string> k_readback_keys{"files", "size"};
const std::vector<std::string> k_coherency_keys{"changes", "window"};
const std::vector<std::string> k_guest_keys{"memory",     "cpus",        "accel",
                                            "machine",    "count_9p",    "scratch",
                                            "host_paths", "share_limit", "profile"};
const std::vector<std::string> k_timeout_keys{"boot", "workload", "silence"};
const std::vector<std::string> k_slurm_keys{"partition", "time",   "account", "constraint",
                                            "exclusive", "sbatch", "shared"};

const std::vector<std::string> k_watch_keys{"kernel",
                                            "repo",
                                            "branch",
                                            "interval",
                                            "criteria",
                                            "paths",
                                            "reference",
                                            "samples",
                                            "max_bisect_samples",
                                            "max_bisect_builds",
                                            "max_bisect_boots",
                                            "max_bisect_time",
                                            "dashboard",
                                            "outbox",
                                            "send",
                                            "from",
                                            "cc",
                                            "archive"};

const std::vector<std::string>& rule_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> names = core::axis_names();
        names.push_back("kernel");
        return names;
    }();
    return keys;
}

std::vector<KeyGroup> key_groups() {
    // A rule's axes are the matrix's, documented there; what it adds is documented with it.
    std::vector<std::string> axes = core::axis_names();
    std::vector<std::string> rule_only;
    for (const std::string& key : rule_keys())
        if (std::find(axes.begin(), axes.end(), key) == axes.end())
            rule_only.push_back(key);
    return {
        {"Top-level keys", k_top_keys},
        {"`kernels`", k_kernel_keys},
        {"`matrix`", axes},
        {"`exclude` and `include`", rule_only},
        {"`workload`", k_workload_keys},
        {"`workload`", k_generate_keys},
        {"`workload`", k_readback_keys},
        {"`workload`", k_coherency_keys},
        {"`guest`", k_guest_keys},
        {"`slurm`", k_slurm_keys},
        {"`timeouts`", k_timeout_keys},
        {"`watch`", k_watch_keys},
    };
}

} // namespace rig::spec
