// SPDX-License-Identifier: MIT
// JSON: the one place that includes nlohmann-json. Reports, host facts and the worker's
// job files and records all read and write JSON through these names, so that the library
// has one home like every other.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rig::util {

// Keys in insertion order: what rig writes reads in the order it was built.
using Json = nlohmann::ordered_json;
// Keys sorted: the type the library's field-list macros (NLOHMANN_DEFINE_TYPE_*) convert
// to and from, for records whose fields are declared once in such a list.
using SortedJson = nlohmann::json;

// Indented JSON text with a final newline. A byte that is not UTF-8 (a guest's error
// line, a Latin-1 file name) becomes U+FFFD, where the library would throw.
inline std::string json_text(const Json& json, int indent = 2) {
    return json.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

// One line, no final newline: JSON kept in a database column. Bytes that are not UTF-8
// become U+FFFD, as in json_text.
inline std::string json_line(const Json& json) {
    return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace rig::util
