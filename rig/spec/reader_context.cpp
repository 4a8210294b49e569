// SPDX-License-Identifier: MIT
// The scenario reader's shared helpers: located errors, suggestions and canonical values.
#include "spec/reader_context.hpp"

#include "core/axis.hpp"
#include "core/diagnostic.hpp"
#include "core/fs.hpp"
#include "core/matrix.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace rig::spec {

using core::Located;

namespace {

// The kernel keeps msize in an unsigned int.
constexpr uint64_t k_max_msize = std::numeric_limits<uint32_t>::max();

std::vector<std::string> all_caches() {
    std::vector<std::string> caches;
    for (const core::Filesystem* fs : core::filesystems())
        for (const std::string& cache : core::valid_caches(*fs))
            if (!contains(caches, cache))
                caches.push_back(cache);
    return caches;
}

bool is_fragment_name(std::string_view name) {
    return is_word(name, "_-", false);
}

} // namespace

tl::unexpected<Error> error_at(const Context& context, const Located& value,
                               std::string_view message) {
    return core::config_error(context.file, value.loc, value.path, message);
}

std::string unknown(std::string_view what, std::string_view word,
                    const std::vector<std::string>& candidates) {
    std::string message = "unknown " + std::string(what) + " '" + std::string(word) + "'";
    if (std::string guess = util::closest_match(word, candidates); !guess.empty())
        return message + "; did you mean '" + guess + "'?";
    return message + " (valid: " + util::join(candidates, ", ") + ")";
}

bool contains(const std::vector<std::string>& list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

Expected<Located> canonical_axis_value(const Context& context, std::string_view axis,
                                       Located value) {
    if (axis == "fs") {
        if (!core::find_fs(value.value))
            return error_at(context, value, unknown("fs", value.value, core::fs_names()));
    } else if (axis == "msize") {
        auto bytes = util::parse_size(value.value);
        if (!bytes)
            return error_at(context, value,
                            "expected a size in bytes such as 8192 or 512K, got '" + value.value +
                                "'");
        if (*bytes < core::k_min_msize)
            return error_at(context, value,
                            "msize must be at least " + std::to_string(core::k_min_msize) +
                                " bytes (a 9p header plus payload), got " + value.value);
        if (*bytes > k_max_msize)
            return error_at(context, value,
                            "msize must be at most " + std::to_string(k_max_msize) +
                                " bytes (the kernel keeps it in 32 bits), got " + value.value);
        value.value = std::to_string(*bytes);
    } else if (axis == "cache") {
        // Whether the mode suits the cell's fs is core::expand's call; a word no fs knows
        // is a typo we can name here with a suggestion.
        if (!contains(all_caches(), value.value))
            return error_at(context, value, unknown("cache mode", value.value, all_caches()));
    } else if (const core::AxisDef* def = core::find_axis(axis);
               def && def->kind == core::AxisKind::seconds) {
        auto seconds = core::canonical_seconds(value.value);
        if (!seconds)
            return error_at(context, value,
                            "expected seconds such as 0, 1 or 0.5 (at most " +
                                std::to_string(static_cast<int>(core::k_max_axis_seconds)) +
                                ", 9 decimals), got '" + value.value + "'");
        value.value = *seconds;
    } else if (def && def->kind == core::AxisKind::boolean) {
        auto boolean = core::canonical_boolean(value.value);
        if (!boolean)
            return error_at(context, value, "expected true or false, got '" + value.value + "'");
        value.value = *boolean;
    } else if (axis == "series") {
        if (value.value != "without" && value.value != "with")
            return error_at(context, value,
                            "a series is applied or not: 'without' or 'with', got '" + value.value +
                                "'");
    } else if (axis == "config") {
        if (!is_fragment_name(value.value))
            return error_at(context, value,
                            "config fragment names use only a-z, 0-9, '_' and '-', got '" +
                                value.value + "'");
    }
    return value;
}

Expected<bool> read_boolean(const Context& context, const YAML::Node& node, std::string_view path) {
    Located value = RIG_TRY(read_scalar(context, node, path, "true or false"));
    auto boolean = core::canonical_boolean(value.value);
    if (!boolean)
        return error_at(context, value, "expected true or false, got '" + value.value + "'");
    return *boolean == "true";
}

Expected<void> check_unique(const Context& context, const std::vector<Located>& values,
                            const std::vector<std::string>& written) {
    std::map<std::string, const Located*> seen;
    for (size_t i = 0; i < values.size(); ++i) {
        auto [first, inserted] = seen.emplace(values[i].value, &values[i]);
        if (inserted)
            continue;
        std::string shown = "'" + written[i] + "'";
        if (written[i] != values[i].value)
            shown += " (" + values[i].value + ")";
        return error_at(context, values[i],
                        "duplicate value " + shown + "; already listed at line " +
                            std::to_string(first->second->loc.line));
    }
    return {};
}

Expected<std::vector<Located>> read_axis_values(const Context& context, std::string_view axis,
                                                const YAML::Node& node, std::string_view path) {
    std::vector<Located> values = RIG_TRY(read_scalars(context, node, path, Shape::scalar_or_list));
    std::vector<std::string> written;
    for (Located& value : values) {
        written.push_back(value.value);
        value = RIG_TRY(canonical_axis_value(context, axis, std::move(value)));
    }
    RIG_TRY(check_unique(context, values, written));
    return values;
}

Expected<std::vector<std::string>> read_string_list(const Context& context, const YAML::Node& node,
                                                    std::string_view path) {
    std::vector<std::string> out;
    if (node.IsSequence() && node.size() == 0)
        return out;
    for (const Located& value : RIG_TRY(read_scalars(context, node, path, Shape::list)))
        out.push_back(value.value);
    return out;
}

Expected<std::chrono::milliseconds> duration_of(const Context& context, const Located& text,
                                                std::string_view example,
                                                std::chrono::milliseconds minimum) {
    auto duration = util::parse_duration(text.value);
    if (!duration)
        return error_at(context, text,
                        "expected a duration such as " + std::string(example) + ", got '" +
                            text.value + "'");
    if (minimum.count() > 0 && *duration < minimum)
        return error_at(context, text,
                        "expected a duration of at least " +
                            (minimum.count() % 60000 == 0
                                 ? std::to_string(minimum.count() / 60000) + "m"
                                 : std::to_string(minimum.count() / 1000) + "s") +
                            " such as " + std::string(example) + ", got '" + text.value + "'");
    if (duration->count() <= 0)
        return error_at(context, text, "must be longer than 0, got '" + text.value + "'");
    return *duration;
}

Expected<Located> read_argument(const Context& context, const YAML::Node& node,
                                std::string_view path, std::string_view what) {
    Located value = RIG_TRY(read_scalar(context, node, path, what));
    if (value.value.front() == '-')
        return error_at(context, value, "must not start with '-', got '" + value.value + "'");
    return value;
}

} // namespace rig::spec
