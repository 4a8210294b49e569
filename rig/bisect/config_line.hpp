// SPDX-License-Identifier: MIT
// A config bisect's line (`rig bisect start --good-config A --bad-config B`): the options
// whose values differ between A's and B's resolved .config, one switch each, in name order,
// made into commits on the cell's commit that change no file. Step k is A's .config with
// the first k switched to B's values, every value a wish (kernel/config.hpp), so that
// olddefconfig resolves it: a switch whose dependency comes later on the line takes
// effect together with it. Git's bisect then bisects the line as any history.
#pragma once

#include "kernel/config.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace rig::bisect {

struct ConfigSwitch {
    std::string symbol; // CONFIG_X
    std::string from;   // as a .config writes it; "n" when not set or absent
    std::string to;
};

// The symbols whose values differ between `good` and `bad`, by name; a symbol one side
// lacks counts as not set there. Also what olddefconfig changed together between the
// resolved .configs of two neighbouring steps.
std::vector<ConfigSwitch> config_switches(const kernel::ConfigValues& good,
                                          const kernel::ConfigValues& bad);

// The options of step `k` (0: `good` itself; every switch: `bad`): `good`'s values with
// the first k switched, each a wish.
std::map<std::string, std::string> config_step_options(const kernel::ConfigValues& good,
                                                       const std::vector<ConfigSwitch>& line,
                                                       size_t k);

// "CONFIG_X=y (was not set)", "CONFIG_Y not set (was m)".
std::string switch_text(const ConfigSwitch& change);

// One mail per switch, for History::commit_series: a subject naming it, no diff, a fixed
// author and date, so that the same line gives the same commits on every resume.
// `sides` says what A and B were ("base,release -> base,release,all").
std::vector<std::string> config_line_mails(const std::vector<ConfigSwitch>& line,
                                           const std::string& sides);

} // namespace rig::bisect
