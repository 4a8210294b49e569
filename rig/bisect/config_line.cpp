// SPDX-License-Identifier: MIT
// A config bisect's switches, each step's options and the mails its line is committed from.
#include "bisect/config_line.hpp"

#include "util/mail.hpp"

#include <chrono>
#include <set>

namespace rig::bisect {

namespace {

// The date of every switch's commit: git's own first commit's.
constexpr long long k_line_date = 1112911993;

} // namespace

std::vector<ConfigSwitch> config_switches(const kernel::ConfigValues& good,
                                          const kernel::ConfigValues& bad) {
    auto value = [](const kernel::ConfigValues& values, const std::string& symbol) {
        auto found = values.find(symbol);
        return found == values.end() ? std::string("n") : found->second;
    };
    std::set<std::string> symbols;
    for (const auto& [symbol, ignored] : good)
        symbols.insert(symbol);
    for (const auto& [symbol, ignored] : bad)
        symbols.insert(symbol);
    std::vector<ConfigSwitch> line;
    for (const std::string& symbol : symbols) {
        std::string from = value(good, symbol), to = value(bad, symbol);
        if (from != to)
            line.push_back({symbol, from, to});
    }
    return line;
}

std::map<std::string, std::string> config_step_options(const kernel::ConfigValues& good,
                                                       const std::vector<ConfigSwitch>& line,
                                                       size_t k) {
    std::map<std::string, std::string> options;
    for (const auto& [symbol, value] : good)
        options[symbol] = kernel::k_wish_mark + value;
    for (size_t i = 0; i < k && i < line.size(); ++i)
        options[line[i].symbol] = kernel::k_wish_mark + line[i].to;
    return options;
}

std::string switch_text(const ConfigSwitch& change) {
    auto said = [&](const std::string& value) {
        return value == "n" ? std::string("not set") : value;
    };
    return change.symbol + (change.to == "n" ? " not set" : "=" + change.to) + " (was " +
           said(change.from) + ")";
}

std::vector<std::string> config_line_mails(const std::vector<ConfigSwitch>& line,
                                           const std::string& sides) {
    std::vector<std::string> mails;
    const std::string total = std::to_string(line.size());
    for (size_t i = 0; i < line.size(); ++i) {
        util::MessageHeaders headers;
        headers.from = headers.to = "rig <rig@localhost>";
        headers.message_id = "config-switch-" + std::to_string(i + 1) + "@rig.invalid";
        headers.subject =
            "[PATCH " + std::to_string(i + 1) + "/" + total + "] config: " + switch_text(line[i]);
        // Fixed: the same line makes the same commits on every resume.
        headers.date = std::chrono::system_clock::time_point(std::chrono::seconds(k_line_date));
        mails.push_back(util::mbox_message(headers, "Switch " + std::to_string(i + 1) + " of " +
                                                        total + " of rig's config bisect " + sides +
                                                        ".\n"));
    }
    return mails;
}

} // namespace rig::bisect
