// SPDX-License-Identifier: MIT
// Typed reads of yaml-cpp nodes that turn every mismatch into a located config Error.
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace rig::spec {

// What every error needs besides the node: the file label given by the caller.
struct Context {
    std::string file;
};

// A node together with the key path that leads to it ("kernels[2].ref").
struct Item {
    YAML::Node node;
    std::string path;
};

// One key: value pair of a map, in file order.
struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
    std::string path;
};

// The one YAML document of `text`; a Null node when there is none. Throws YAML::Exception
// on a syntax error, like yaml-cpp itself.
Expected<YAML::Node> load_document(const Context& context, const std::string& text);

// yaml-cpp marks are 0-based; rig's are 1-based, and 0 means unknown.
core::Loc loc_of(const YAML::Node& node);
core::Loc loc_of(const YAML::Mark& mark);

std::string child_path(std::string_view parent, std::string_view key);
std::string index_path(std::string_view parent, size_t index);

// "a map", "a list", "a scalar", "an empty value": for "expected X, got Y".
std::string describe(const YAML::Node& node);

tl::unexpected<Error> error_at(const Context& context, const YAML::Node& node,
                               std::string_view path, std::string_view message);

// A map with scalar keys and no key given twice. With `known`, any other key is an error
// that suggests the closest known one. A key without a value is an error unless it is
// listed in `may_be_empty`.
Expected<std::vector<Entry>> read_map(const Context& context, const YAML::Node& node,
                                      std::string_view path, const std::vector<std::string>* known,
                                      const std::vector<std::string>& may_be_empty = {});
const Entry* find_entry(const std::vector<Entry>& entries, std::string_view key);

// A list; its items carry "path[i]".
Expected<std::vector<Item>> read_list(const Context& context, const YAML::Node& node,
                                      std::string_view path);

// A non-empty scalar. `what` names the expected value in messages ("a string", "a path").
Expected<core::Located> read_scalar(const Context& context, const YAML::Node& node,
                                    std::string_view path, std::string_view what = "a string");

enum class Shape {
    list,           // only [a, b]
    scalar_or_list, // `a` means [a]
};

// A non-empty list of non-empty scalars.
Expected<std::vector<core::Located>> read_scalars(const Context& context, const YAML::Node& node,
                                                  std::string_view path, Shape shape);

// A decimal integer within [min, max]; "3.5", "0x10" and "three" are errors.
Expected<int64_t> read_integer(const Context& context, const YAML::Node& node,
                               std::string_view path, int64_t min, int64_t max);

// True when every character is one of [A-Za-z0-9] or listed in `extra`.
bool is_word(std::string_view text, std::string_view extra, bool allow_upper = true);

} // namespace rig::spec
