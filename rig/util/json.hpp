// SPDX-License-Identifier: MIT
// JSON: the one place that includes nlohmann-json. Reports, host facts and the worker's
// job files and records all read and write JSON through these names, so that the library
// has one home like every other.
#pragma once

#include "util/fields.hpp"

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

// A record with a field list (util/fields.hpp) as a JSON object, each field under its
// name. Members convert through the library, rig's enums through their to_json beside
// the record; an empty optional is null.
template <class Record> SortedJson fields_to_json(const Record& record) {
    SortedJson out = SortedJson::object();
    fields(record, [&](const char* name, const auto& member) {
        using T = std::remove_cvref_t<decltype(member)>;
        if constexpr (k_is_optional<T>)
            out[name] = member ? SortedJson(*member) : SortedJson(nullptr);
        else
            out[name] = member;
    });
    return out;
}

// The inverse. A key the object lacks leaves its field at the default, so that JSON
// written before a field was added still reads; a value of the wrong type throws the
// library's exception, for the caller to stop at its border.
template <class Record> void fields_from_json(const SortedJson& json, Record& record) {
    fields(record, [&](const char* name, auto& member) {
        using T = std::remove_cvref_t<decltype(member)>;
        auto it = json.find(name);
        if (it == json.end())
            return;
        if constexpr (k_is_optional<T>) {
            if (it->is_null())
                member.reset();
            else
                member = it->template get<typename T::value_type>();
        } else {
            it->get_to(member);
        }
    });
}

} // namespace rig::util
