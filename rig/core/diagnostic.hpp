// SPDX-License-Identifier: MIT
// The one format of scenario errors: "FILE:LINE:COL: KEY.PATH: message".
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"

#include <string>
#include <string_view>

namespace rig::core {

std::string located_message(std::string_view file, Loc loc, std::string_view key_path,
                            std::string_view message);

inline tl::unexpected<Error> config_error(std::string_view file, Loc loc, std::string_view key_path,
                                          std::string_view message) {
    return fail(ErrorKind::config, located_message(file, loc, key_path, message));
}

} // namespace rig::core
