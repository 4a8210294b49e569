// SPDX-License-Identifier: MIT
// Typed, located reads of yaml-cpp nodes.
#include "spec/yaml_reader.hpp"

#include "core/diagnostic.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <yaml-cpp/eventhandler.h>

namespace rig::spec {

namespace {

// Keeps where the last document started and ignores every other event: enough to tell
// whether a second document follows the first.
class DocumentStart final : public YAML::EventHandler {
public:
    void OnDocumentStart(const YAML::Mark& mark) override { m_mark = mark; }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}

    const YAML::Mark& mark() const { return m_mark; }

private:
    YAML::Mark m_mark;
};

} // namespace

Expected<YAML::Node> load_document(const Context& context, const std::string& text) {
    // Not YAML::LoadAll: in yaml-cpp 0.7 it loops forever, allocating, when a stray ','
    // follows a document. One parser call per document always makes progress.
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentStart start;
    if (!parser.HandleNextDocument(start))
        return YAML::Node(YAML::NodeType::Null);
    if (parser.HandleNextDocument(start)) {
        core::Loc loc = loc_of(start.mark());
        auto pos = static_cast<size_t>(std::max(0, start.mark().pos));
        bool new_document = text.compare(pos, 3, "---") == 0 || text.compare(pos, 3, "...") == 0;
        return core::config_error(context.file, loc, "",
                                  new_document
                                      ? "a scenario file holds one YAML document; remove the "
                                        "second one"
                                      : "unexpected text after the end of the YAML document");
    }
    return YAML::Load(text);
}

core::Loc loc_of(const YAML::Mark& mark) {
    if (mark.is_null() || mark.line < 0 || mark.column < 0)
        return {};
    return {mark.line + 1, mark.column + 1};
}

core::Loc loc_of(const YAML::Node& node) {
    if (!node.IsDefined())
        return {};
    return loc_of(node.Mark());
}

std::string child_path(std::string_view parent, std::string_view key) {
    std::string out(parent);
    if (!out.empty())
        out += '.';
    out += key;
    return out;
}

std::string index_path(std::string_view parent, size_t index) {
    return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::string describe(const YAML::Node& node) {
    switch (node.Type()) {
    case YAML::NodeType::Map:
        return "a map";
    case YAML::NodeType::Sequence:
        return "a list";
    case YAML::NodeType::Scalar: {
        // Long scalars would drown the message; the position already says where it is.
        std::string text = node.Scalar();
        if (text.size() > 40)
            text = text.substr(0, 37) + "...";
        return "'" + text + "'";
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
        break;
    }
    return "an empty value";
}

tl::unexpected<Error> error_at(const Context& context, const YAML::Node& node,
                               std::string_view path, std::string_view message) {
    return core::config_error(context.file, loc_of(node), path, message);
}

Expected<std::vector<Entry>> read_map(const Context& context, const YAML::Node& node,
                                      std::string_view path, const std::vector<std::string>* known,
                                      const std::vector<std::string>& may_be_empty) {
    if (!node.IsMap())
        return error_at(context, node, path, "expected a map, got " + describe(node));
    std::vector<Entry> entries;
    // yaml-cpp keeps both copies of a repeated key and lookups see only the first, so a
    // second value would be silently ignored.
    std::map<std::string, core::Loc> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
        // Copies: yaml-cpp's iterator hands out a temporary proxy, so a reference into
        // it->first would dangle at the end of the statement.
        YAML::Node key = it->first;
        YAML::Node value = it->second;
        if (!key.IsScalar() || key.Scalar().empty())
            return error_at(context, key, path, "keys must be plain words, got " + describe(key));
        std::string name = key.Scalar();
        std::string key_path = child_path(path, name);
        auto [first, inserted] = seen.emplace(name, loc_of(key));
        if (!inserted)
            return error_at(context, key, key_path,
                            "key given twice (first at line " + std::to_string(first->second.line) +
                                ")");
        if (known && std::find(known->begin(), known->end(), name) == known->end()) {
            std::string message = "unknown key '" + name + "'";
            if (std::string guess = util::closest_match(name, *known); !guess.empty())
                message += "; did you mean '" + guess + "'?";
            else
                message += " (known: " + util::join(*known, ", ") + ")";
            return error_at(context, key, key_path, message);
        }
        // yaml-cpp places an empty value at the next token, often on a later line; the key
        // is where the user has to look.
        if (value.IsNull() &&
            std::find(may_be_empty.begin(), may_be_empty.end(), name) == may_be_empty.end())
            return error_at(context, key, key_path, "no value given");
        entries.push_back(Entry{name, key, value, key_path});
    }
    return entries;
}

const Entry* find_entry(const std::vector<Entry>& entries, std::string_view key) {
    for (const Entry& entry : entries)
        if (entry.key == key)
            return &entry;
    return nullptr;
}

Expected<std::vector<Item>> read_list(const Context& context, const YAML::Node& node,
                                      std::string_view path) {
    if (!node.IsSequence())
        return error_at(context, node, path, "expected a list, got " + describe(node));
    std::vector<Item> items;
    size_t index = 0;
    for (auto it = node.begin(); it != node.end(); ++it, ++index)
        items.push_back(Item{*it, index_path(path, index)});
    return items;
}

Expected<core::Located> read_scalar(const Context& context, const YAML::Node& node,
                                    std::string_view path, std::string_view what) {
    if (!node.IsScalar())
        return error_at(context, node, path,
                        "expected " + std::string(what) + ", got " + describe(node));
    if (util::trim(node.Scalar()).empty())
        return error_at(context, node, path, "must not be empty");
    return core::Located{node.Scalar(), loc_of(node), std::string(path)};
}

Expected<std::vector<core::Located>> read_scalars(const Context& context, const YAML::Node& node,
                                                  std::string_view path, Shape shape) {
    std::vector<core::Located> values;
    if (shape == Shape::scalar_or_list && node.IsScalar()) {
        values.push_back(RIG_TRY(read_scalar(context, node, path)));
        return values;
    }
    if (!node.IsSequence()) {
        std::string expected = shape == Shape::list ? "a list" : "a value or a list of values";
        return error_at(context, node, path, "expected " + expected + ", got " + describe(node));
    }
    if (node.size() == 0)
        return error_at(context, node, path, "empty list; give at least one value");
    for (const Item& item : RIG_TRY(read_list(context, node, path)))
        values.push_back(RIG_TRY(read_scalar(context, item.node, item.path)));
    return values;
}

Expected<int64_t> read_integer(const Context& context, const YAML::Node& node,
                               std::string_view path, int64_t min, int64_t max) {
    core::Located text = RIG_TRY(read_scalar(context, node, path, "an integer"));
    std::string_view digits = text.value;
    bool negative = !digits.empty() && digits.front() == '-';
    if (negative)
        digits.remove_prefix(1);
    bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
    if (!all_digits)
        return error_at(context, node, path, "expected an integer, got " + describe(node));

    // Accumulate towards the sign so that an overflow is caught before it happens.
    int64_t value = 0;
    bool overflow = false;
    for (char c : digits) {
        int64_t digit = c - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
            overflow = true;
            break;
        }
        value = value * 10 + digit;
    }
    if (negative)
        value = -value;

    std::string range;
    if (max == std::numeric_limits<int64_t>::max())
        range = min == 0 ? "must not be negative" : "must be at least " + std::to_string(min);
    else
        range = "must be between " + std::to_string(min) + " and " + std::to_string(max);
    if (!overflow && value < 0 && min >= 0)
        return error_at(context, node, path, "must not be negative, got " + text.value);
    if (overflow || value < min || value > max)
        return error_at(context, node, path, range + ", got " + text.value);
    return value;
}

bool is_word(std::string_view text, std::string_view extra, bool allow_upper) {
    if (text.empty())
        return false;
    for (char c : text) {
        // Explicit ranges: <cctype> would depend on the locale.
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  (allow_upper && c >= 'A' && c <= 'Z') || extra.find(c) != std::string_view::npos;
        if (!ok)
            return false;
    }
    return true;
}

} // namespace rig::spec
