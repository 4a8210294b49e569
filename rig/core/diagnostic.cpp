// SPDX-License-Identifier: MIT
// Formatting of located scenario errors.
#include "core/diagnostic.hpp"

namespace rig::core {

std::string located_message(std::string_view file, Loc loc, std::string_view key_path,
                            std::string_view message) {
    std::string out(file);
    if (loc.line > 0)
        out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
    out += ": ";
    if (!key_path.empty()) {
        out += key_path;
        out += ": ";
    }
    out += message;
    return out;
}

} // namespace rig::core
