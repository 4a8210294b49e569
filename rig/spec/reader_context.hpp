// SPDX-License-Identifier: MIT
// What every part of the scenario reader shares: located errors and canonical values.
#pragma once

#include "core/scenario.hpp"
#include "spec/yaml_reader.hpp"
#include "util/error.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace rig::spec {

tl::unexpected<Error> error_at(const Context& context, const core::Located& value,
                               std::string_view message);

// "unknown fs 'zfs'; did you mean ...?" or, with no close candidate, the valid list.
std::string unknown(std::string_view what, std::string_view word,
                    const std::vector<std::string>& candidates);

bool contains(const std::vector<std::string>& list, std::string_view word);

// Turns an axis value as written into its canonical text: the text cell ids are made of.
Expected<core::Located> canonical_axis_value(const Context& context, std::string_view axis,
                                             core::Located value);

// Rejects a value listed twice; `written` holds the values as the user wrote them, so the
// message can say why "4K" and "4096" collide.
// A boolean key's value, in any spelling core::canonical_boolean takes.
Expected<bool> read_boolean(const Context& context, const YAML::Node& node, std::string_view path);

Expected<void> check_unique(const Context& context, const std::vector<core::Located>& values,
                            const std::vector<std::string>& written);

// The values of one matrix axis or rule key, canonical and each listed once.
Expected<std::vector<core::Located>> read_axis_values(const Context& context, std::string_view axis,
                                                      const YAML::Node& node,
                                                      std::string_view path);

// A list of strings where an empty list just means "none".
Expected<std::vector<std::string>> read_string_list(const Context& context, const YAML::Node& node,
                                                    std::string_view path);

// A duration key's value as written (`90s`, `2m`, `1h30m`), longer than 0 and at least
// `minimum`; the errors give `example` ("90s, 2m or 1h30m") and the minimum when there is
// one.
Expected<std::chrono::milliseconds> duration_of(const Context& context, const core::Located& text,
                                                std::string_view example,
                                                std::chrono::milliseconds minimum = {});

// Values handed to other programs as arguments must not look like options.
Expected<core::Located> read_argument(const Context& context, const YAML::Node& node,
                                      std::string_view path, std::string_view what);

} // namespace rig::spec
