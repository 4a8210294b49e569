// SPDX-License-Identifier: MIT
// Kernel .config text: named fragments, merging them over tinyconfig, and checking the result.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rig::kernel {

// Symbol -> value as written in a .config: "y", "m", "n" (for "# CONFIG_X is not set"),
// a number, or a quoted string. Later lines win, as in Kconfig.
using ConfigValues = std::map<std::string, std::string>;

// rig's own fragments (kernels/*.config, embedded at build time), by name.
const std::map<std::string, std::string_view>& builtin_fragments();

// The text of fragment `name`: `dir/NAME.config` for the first dir that has one, else
// the built-in fragment; an unknown name is a config error that lists the known ones.
Expected<std::string> fragment_text(const std::string& name,
                                    const std::vector<std::filesystem::path>& dirs);

ConfigValues parse_config(std::string_view text);

// A scenario option value (`y`, `8`, `0x10`, `some text`) in .config syntax: strings
// are quoted, everything else is written as given.
std::string option_value(std::string_view value);

struct Fragment {
    std::string name;
    std::string text;
};

// An option value that starts with this is a wish: written into the .config like any
// other, but not checked against what olddefconfig made of it. A config bisect sets each
// step's options so: a switch whose dependency comes later takes effect with it.
inline constexpr char k_wish_mark = '?';

// What a kernel entry asks for: fragments in order, then the options (options win).
struct RequestedConfig {
    std::string text;     // the merged request, stable: its sha256 is the config hash
    ConfigValues values;  // every assignment it makes, wishes included
    ConfigValues checked; // the assignments the .config must keep: all but the wishes
    bool modules = false; // some value is =m, so CONFIG_MODULES=y is requested too
};
RequestedConfig compose(const std::vector<Fragment>& fragments,
                        const std::map<std::string, std::string>& options);

// `base` (tinyconfig's .config) with every requested symbol's line replaced by the
// requested one; olddefconfig then resolves dependencies.
std::string merge(std::string_view base, const ConfigValues& requested);

// Requested values the final .config does not have, one message each, naming the
// option: "CONFIG_9P_FS=y requested, .config has it not set".
std::vector<std::string> unmet(const ConfigValues& requested, const ConfigValues& actual);

// True when any symbol is =m: the build then adds `modules` and `modules_install`.
bool uses_modules(const ConfigValues& config);

// The image make builds: the ELF vmlinux alone when QEMU can start it through PVH
// (CONFIG_PVH=y), which spares every build the bzImage's compression and setup code
// (about 3 s of an incremental build on two cores); the bzImage otherwise.
inline constexpr const char* k_vmlinux_target = "vmlinux";
inline constexpr const char* k_bzimage_target = "bzImage";
std::string image_target(const ConfigValues& config);

} // namespace rig::kernel
