// SPDX-License-Identifier: MIT
// `rig doctor`: what the host has, what is missing, and the Debian package that brings it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace rig::host {

// missing: not there (a package brings it); failed: there but broken (a damaged file).
enum class Status { ok, warn, missing, failed };

struct Check {
    std::string name;
    Status status = Status::ok;
    std::string detail;
    std::string package; // what to apt-get install when not ok
};

// `data_dir` is where results and caches go; its free space is checked. `cache_dir` keeps
// the KVM probe's answer (host/kvm_probe.hpp), which the accelerator check shares with runs.
std::vector<Check> run_checks(const std::filesystem::path& data_dir,
                              const std::filesystem::path& cache_dir);

// True when the ELF file has no PT_INTERP: a static binary, usable inside the initramfs.
bool is_static_elf(const std::filesystem::path& file);

} // namespace rig::host
