// SPDX-License-Identifier: MIT
// Records whose fields are declared once: a `fields(record, visit)` function beside the
// record calls visit(name, member) for each field, and every codec follows that list.
#pragma once

#include <concepts>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rig::util {

// True for the one record type a field list is written for, const or not, so that one
// list serves both reading and writing.
template <class Const, class Record>
concept RecordOf = std::same_as<std::remove_const_t<Const>, Record>;

template <class T> inline constexpr bool k_is_optional = false;
template <class T> inline constexpr bool k_is_optional<std::optional<T>> = true;
template <class T> inline constexpr bool k_is_vector = false;
template <class T> inline constexpr bool k_is_vector<std::vector<T>> = true;

// Copies each field of `from` to the field of `to` with the same name and type, so that
// two records of one thing (a cache's and a database's) stay in step without a
// hand-written copy. Fields only one of them lists are left alone.
template <class From, class To> void copy_named_fields(const From& from, To& to) {
    fields(from, [&](std::string_view name, const auto& source) {
        fields(to, [&](std::string_view target_name, auto& target) {
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(source)>,
                                         std::remove_cvref_t<decltype(target)>>)
                if (name == target_name)
                    target = source;
        });
    });
}

} // namespace rig::util
