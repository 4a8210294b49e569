// SPDX-License-Identifier: MIT
// The bisect's stored settings and its cell filter.
#include "bisect/settings.hpp"

#include "core/results_folder.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

#include <type_traits>

namespace rig::bisect {

std::string encode_settings(const StartOptions& options) {
    return util::fields_to_json(options).dump();
}

namespace {

// A value of the key=value lines: as the field's type reads it, or throws.
template <class T> void read_value(const std::string& value, T& member) {
    if constexpr (std::is_same_v<T, bool>)
        member = value == "1";
    else if constexpr (std::is_integral_v<T>)
        member = std::stoi(value);
    else if constexpr (std::is_floating_point_v<T>)
        member = std::stod(value);
    else
        member = value;
}

Expected<StartOptions> decode_lines(const std::string& text) {
    StartOptions options;
    for (const std::string& line : util::split(text, '\n')) {
        auto equals = line.find('=');
        if (equals == std::string::npos)
            continue;
        const std::string key = line.substr(0, equals), value = line.substr(equals + 1);
        try {
            fields(options, [&](const char* name, auto& member) {
                if (key == name)
                    read_value(value, member);
            });
        } catch (const std::exception&) {
            return fail(ErrorKind::infra, "stored bisect setting '" + line + "' is not valid");
        }
    }
    return options;
}

} // namespace

Expected<StartOptions> decode_settings(const std::string& text) {
    if (!util::starts_with(text, "{"))
        return decode_lines(text);
    try {
        StartOptions options;
        util::fields_from_json(util::SortedJson::parse(text), options);
        return options;
    } catch (const util::SortedJson::exception& error) {
        return fail(ErrorKind::infra,
                    "stored bisect settings are not valid (" + std::string(error.what()) + ")");
    }
}

Expected<size_t> select_cell(const std::vector<core::Cell>& cells, const std::string& filter) {
    // A scenario of one cell leaves nothing to choose.
    if (filter.empty() && cells.size() == 1)
        return 0;
    std::vector<size_t> matches;
    for (size_t i = 0; i < cells.size(); ++i)
        if (RIG_TRY(core::cell_matches(cells[i], filter)))
            matches.push_back(i);
    if (matches.size() == 1)
        return matches.front();
    std::string list;
    for (const core::Cell& cell : cells)
        list += "\n  " + cell.id + " " + cell.label();
    if (filter.empty())
        return fail(ErrorKind::usage, "the scenario has " + std::to_string(cells.size()) +
                                          " cells: --cell must name exactly one of:" + list);
    return fail(ErrorKind::usage, "--cell " + filter + " matches " +
                                      std::to_string(matches.size()) +
                                      " cells; it must name exactly one of:" + list);
}

std::filesystem::path bisects_folder(const Settings& settings, const std::filesystem::path& root) {
    return core::results_folder(root.empty() ? settings.results_dir : root, settings.db,
                                core::Kept::bisects);
}

} // namespace rig::bisect
