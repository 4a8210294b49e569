// SPDX-License-Identifier: MIT
// Kernel .config fragments, merging and verification.
#include "kernel/config.hpp"

#include "util/strings.hpp"

#include <fstream>
#include <sstream>

extern const char rig_fragment_base[];
extern const char rig_fragment_debug[];
extern const char rig_fragment_release[];
extern const char rig_fragment_stats[];

namespace rig::kernel {

namespace fs = std::filesystem;

namespace {

bool is_symbol(std::string_view name) {
    if (!util::starts_with(name, "CONFIG_") || name.size() == 7)
        return false;
    for (char c : name)
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              (c >= 'a' && c <= 'z')))
            return false;
    return true;
}

std::string unquoted(std::string_view value) {
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        return std::string(value.substr(1, value.size() - 2));
    return std::string(value);
}

std::string line_for(const std::string& symbol, const std::string& value) {
    return value == "n" ? "# " + symbol + " is not set" : symbol + "=" + value;
}

} // namespace

const std::map<std::string, std::string_view>& builtin_fragments() {
    static const std::map<std::string, std::string_view> k_fragments{
        {"base", rig_fragment_base},
        {"debug", rig_fragment_debug},
        {"release", rig_fragment_release},
        {"stats", rig_fragment_stats},
    };
    return k_fragments;
}

Expected<std::string> fragment_text(const std::string& name, const std::vector<fs::path>& dirs) {
    for (const fs::path& dir : dirs) {
        fs::path file = dir / (name + ".config");
        if (!fs::is_regular_file(file))
            continue;
        std::ifstream in(file, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in && !in.eof())
            return fail(ErrorKind::config, "cannot read config fragment " + file.string());
        return text.str();
    }
    const auto& builtin = builtin_fragments();
    if (auto it = builtin.find(name); it != builtin.end())
        return std::string(it->second);
    std::vector<std::string> known;
    for (const auto& [known_name, text] : builtin)
        known.push_back(known_name);
    std::string where;
    for (const fs::path& dir : dirs)
        where += (where.empty() ? "" : ", ") + dir.string();
    return fail(ErrorKind::config, "unknown config fragment '" + name + "': no " + name +
                                       ".config in " +
                                       (where.empty() ? "the scenario's folder" : where) +
                                       ", and rig's own fragments are " + util::join(known, ", "));
}

ConfigValues parse_config(std::string_view text) {
    ConfigValues values;
    for (const std::string& raw : util::split(text, '\n')) {
        std::string_view line = util::trim(raw);
        if (util::starts_with(line, "# CONFIG_")) {
            constexpr std::string_view k_not_set = " is not set";
            if (line.size() > k_not_set.size() &&
                line.substr(line.size() - k_not_set.size()) == k_not_set) {
                std::string symbol(line.substr(2, line.size() - 2 - k_not_set.size()));
                if (is_symbol(symbol))
                    values[symbol] = "n";
            }
            continue;
        }
        size_t eq = line.find('=');
        if (eq == std::string_view::npos || !is_symbol(line.substr(0, eq)))
            continue;
        values[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
    return values;
}

std::string option_value(std::string_view value) {
    if (value == "y" || value == "m" || value == "n")
        return std::string(value);
    bool number = !value.empty();
    std::string_view digits = value;
    if (util::starts_with(digits, "-"))
        digits.remove_prefix(1);
    bool hex = util::starts_with(digits, "0x") || util::starts_with(digits, "0X");
    if (hex)
        digits.remove_prefix(2);
    if (digits.empty())
        number = false;
    for (char c : digits)
        if (!((c >= '0' && c <= '9') ||
              (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))))
            number = false;
    if (number || (value.size() >= 2 && value.front() == '"' && value.back() == '"'))
        return std::string(value);
    std::string quoted = "\"";
    for (char c : value) {
        if (c == '"' || c == '\\')
            quoted += '\\';
        quoted += c;
    }
    return quoted + "\"";
}

RequestedConfig compose(const std::vector<Fragment>& fragments,
                        const std::map<std::string, std::string>& options) {
    RequestedConfig request;
    for (const Fragment& fragment : fragments) {
        request.text += "# fragment " + fragment.name + "\n";
        // What a fragment sets, not its text, enters the hash: reformatting a fragment or
        // editing its comments keeps its builds.
        for (const auto& [symbol, value] : parse_config(fragment.text)) {
            request.values[symbol] = value;
            request.checked[symbol] = value;
            request.text += line_for(symbol, value) + "\n";
        }
    }
    std::string asked, wishes;
    for (const auto& [symbol, value] : options) {
        bool wish = !value.empty() && value.front() == k_wish_mark;
        std::string written = option_value(wish ? std::string_view(value).substr(1) : value);
        request.values[symbol] = written;
        (wish ? wishes : asked) += line_for(symbol, written) + "\n";
        if (wish)
            request.checked.erase(symbol);
        else
            request.checked[symbol] = written;
    }
    if (!asked.empty())
        request.text += "# options\n" + asked;
    // Apart in the hashed text: a wish and a request of one value are two configs.
    if (!wishes.empty())
        request.text += "# wishes\n" + wishes;
    request.modules = uses_modules(request.values);
    if (request.modules && request.values["CONFIG_MODULES"] != "y") {
        request.values["CONFIG_MODULES"] = "y";
        request.checked["CONFIG_MODULES"] = "y";
        request.text += "# some option is =m\nCONFIG_MODULES=y\n";
    }
    return request;
}

std::string merge(std::string_view base, const ConfigValues& requested) {
    std::string out;
    for (const std::string& line : util::split(base, '\n')) {
        ConfigValues one = parse_config(line);
        if (!one.empty() && requested.count(one.begin()->first))
            continue;
        if (line.empty() && out.empty())
            continue;
        out += line + "\n";
    }
    out += "# rig: requested\n";
    for (const auto& [symbol, value] : requested)
        out += line_for(symbol, value) + "\n";
    return out;
}

std::vector<std::string> unmet(const ConfigValues& requested, const ConfigValues& actual) {
    std::vector<std::string> problems;
    for (const auto& [symbol, value] : requested) {
        auto it = actual.find(symbol);
        std::string have = it == actual.end() ? "n" : it->second;
        if (unquoted(have) == unquoted(value))
            continue;
        std::string found = it == actual.end() ? "it not set (a missing dependency?)"
                            : have == "n"      ? "it not set"
                                               : symbol + "=" + have;
        problems.push_back(symbol + (value == "n" ? " unset" : "=" + value) +
                           " requested, but .config has " + found);
    }
    return problems;
}

bool uses_modules(const ConfigValues& config) {
    for (const auto& [symbol, value] : config)
        if (value == "m")
            return true;
    return false;
}

std::string image_target(const ConfigValues& config) {
    auto pvh = config.find("CONFIG_PVH");
    return pvh != config.end() && pvh->second == "y" ? k_vmlinux_target : k_bzimage_target;
}

} // namespace rig::kernel
