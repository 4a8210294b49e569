// SPDX-License-Identifier: MIT
// Kernel module closure and load order, resolved from modules.dep as modprobe would.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace rig::guest {

struct ModuleIndex {
    // path relative to lib/modules/VER -> its direct dependencies, as modules.dep lists them
    std::vector<std::pair<std::string, std::vector<std::string>>> deps;
    std::vector<std::string> builtin; // names from modules.builtin
};

// "kernel/fs/9p/9p.ko.xz" -> "9p"; '-' and '_' are the same to the kernel.
std::string module_name(std::string_view path);

ModuleIndex parse_module_index(std::string_view modules_dep, std::string_view modules_builtin);
Expected<ModuleIndex> read_module_index(const std::filesystem::path& modules_dir);

// The files to insmod, dependencies first, for the wanted module names. A wanted module
// that is built in needs nothing; one that is neither built in nor listed is an error
// naming it (a kernel without 9p cannot run a 9p cell).
Expected<std::vector<std::string>> load_order(const ModuleIndex& index,
                                              const std::vector<std::string>& wanted);

// `order` (from load_order) cut into waves: every dependency of a module is in an
// earlier wave, so the modules of one wave can load at once, one insmod each, and a
// guest with two vCPUs loads two at a time.
std::vector<std::vector<std::string>> load_waves(const ModuleIndex& index,
                                                 const std::vector<std::string>& order);

// A module file without the signature appended to it ("~Module signature appended~"), or
// as it is when it has none or the signature block does not parse. Verifying a signature
// costs each insmod milliseconds under TCG; a kernel that does not enforce signatures
// loads the module all the same, tainted 'E' (unsigned), which leaves lockdep on.
std::string_view without_signature(std::string_view module);

} // namespace rig::guest
