// SPDX-License-Identifier: MIT
// The bisect's stored settings and its cell filter.
#include "bisect/settings.hpp"

#include "util/strings.hpp"

#include <sstream>

namespace rig::bisect {

std::string encode_settings(const StartOptions& options) {
    std::ostringstream out;
    out << "scenario=" << options.scenario.string() << "\n"
        << "cell=" << options.cell << "\n"
        << "samples=" << options.samples << "\n"
        << "confidence=" << options.confidence << "\n"
        << "max_samples=" << options.max_samples << "\n"
        << "infra_retries=" << options.infra_retries << "\n"
        << "verify_revert=" << (options.verify_revert ? 1 : 0) << "\n"
        << "jobs=" << options.jobs << "\n";
    return out.str();
}

Expected<StartOptions> decode_settings(const std::string& text) {
    StartOptions options;
    for (const std::string& line : util::split(text, '\n')) {
        auto equals = line.find('=');
        if (equals == std::string::npos)
            continue;
        std::string key = line.substr(0, equals), value = line.substr(equals + 1);
        try {
            if (key == "scenario")
                options.scenario = value;
            else if (key == "cell")
                options.cell = value;
            else if (key == "samples")
                options.samples = std::stoi(value);
            else if (key == "confidence")
                options.confidence = std::stod(value);
            else if (key == "max_samples")
                options.max_samples = std::stoi(value);
            else if (key == "infra_retries")
                options.infra_retries = std::stoi(value);
            else if (key == "verify_revert")
                options.verify_revert = value == "1";
            else if (key == "jobs")
                options.jobs = std::stoi(value);
        } catch (const std::exception&) {
            return fail(ErrorKind::infra, "stored bisect setting '" + line + "' is not valid");
        }
    }
    return options;
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

} // namespace rig::bisect
