// SPDX-License-Identifier: MIT
// Completion of rig's command lines, from the CLI11 definitions main() makes.
#include "cli/complete.hpp"

#include "core/scenario.hpp"
#include "store/store.hpp"
#include "util/strings.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>

namespace rig::cli {

namespace {

template <typename Value>
std::vector<std::string> words_of(const std::map<std::string, Value>& map) {
    std::vector<std::string> words;
    for (const auto& [word, value] : map)
        words.push_back(word);
    return words;
}

// The values of options whose words CLI11 checks but cannot list: (command, option).
const std::map<std::pair<std::string, std::string>, std::vector<std::string>>& known_values() {
    static const std::map<std::pair<std::string, std::string>, std::vector<std::string>> values{
        {{"plan", "--format"}, words_of(plan_format_words())},
        {{"report", "--format"}, words_of(report_format_words())},
        {{"report", "--test"}, words_of(test_words())},
        {{"run", "--backend"}, core::backend_words()},
    };
    return values;
}

// Subcommands a user types: every one but those without a group (complete itself).
std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
    return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

const CLI::App* find_subcommand(const CLI::App& app, const std::string& name) {
    for (const CLI::App* sub : visible_subcommands(app))
        if (sub->get_name() == name)
            return sub;
    return nullptr;
}

// An option of `app` or of a command above it (global options fall through).
const CLI::Option* find_option(const CLI::App* app, const std::string& name) {
    for (; app; app = app->get_parent()) {
        auto options = app->get_options([&name](const CLI::Option* option) {
            return option->nonpositional() && option->check_name(name);
        });
        if (!options.empty())
            return options.front();
    }
    return nullptr;
}

std::vector<const CLI::Option*> positionals(const CLI::App& app) {
    return app.get_options([](const CLI::Option* option) { return !option->nonpositional(); });
}

// The names an option is written with: --long first, then -s.
std::vector<std::string> spellings(const CLI::Option& option) {
    std::vector<std::string> names;
    for (const std::string& name : option.get_lnames())
        names.push_back("--" + name);
    for (const std::string& name : option.get_snames())
        names.push_back("-" + name);
    return names;
}

std::vector<std::string> ids_text(const Expected<std::vector<int64_t>>& ids) {
    std::vector<std::string> words;
    if (ids)
        for (int64_t id : *ids)
            words.push_back(std::to_string(id));
    return words;
}

bool is_number(const std::string& word) {
    return !word.empty() &&
           std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The words an option's value may be.
std::vector<std::string> option_values(const CLI::App& command, const CLI::Option& option,
                                       const std::filesystem::path& db) {
    std::string name = spellings(option).front();
    if (name == "--db" || name == "--template" || name == "--output")
        return {k_complete_files};
    if (name == "--run" || name == "--resume")
        return ids_text(store::Database::run_ids(db));
    auto known = known_values().find({command.get_name(), name});
    if (known != known_values().end())
        return known->second;
    return {};
}

// The words a positional argument may be.
std::vector<std::string> positional_values(const CLI::App& command, const CLI::Option& positional,
                                           const std::filesystem::path& db) {
    const std::string& name = positional.get_name();
    if (name == "scenario")
        return {k_complete_scenarios};
    if (name == "jobfile")
        return {k_complete_files};
    if (name == "id" && command.get_parent() && command.get_parent()->get_name() == "bisect")
        return ids_text(store::Database::bisect_ids(db));
    if (name == "run") // rig reproduce RUN
        return ids_text(store::Database::run_ids(db));
    return {};
}

} // namespace

std::vector<std::string> completions(const CLI::App& app, const std::vector<std::string>& words,
                                     const std::filesystem::path& db) {
    if (words.empty())
        return {};
    const std::string& current = words.back();
    const CLI::App* command = &app;
    std::filesystem::path database = db;
    size_t positional = 0;
    const CLI::Option* pending = nullptr; // the option whose value the current word is
    for (size_t i = 0; i + 1 < words.size(); ++i) {
        const std::string& word = words[i];
        // `--resume [RUN]`: a word that is no number is no value of it.
        if (pending && (pending->get_expected_min() > 0 || is_number(word))) {
            if (spellings(*pending).front() == "--db")
                database = word;
            pending = nullptr;
            continue;
        }
        pending = nullptr;
        if (util::starts_with(word, "-")) {
            size_t equals = word.find('=');
            const CLI::Option* option = find_option(command, word.substr(0, equals));
            if (!option)
                continue;
            if (equals != std::string::npos) {
                if (spellings(*option).front() == "--db")
                    database = word.substr(equals + 1);
            } else if (option->get_type_size_max() > 0) {
                pending = option;
            }
            continue;
        }
        if (const CLI::App* sub = find_subcommand(*command, word)) {
            command = sub;
            positional = 0;
            continue;
        }
        ++positional;
    }

    std::vector<std::string> candidates;
    if (pending)
        candidates = option_values(*command, *pending, database);
    // After an option whose value may be left out, anything else may follow.
    if (!pending || pending->get_expected_min() == 0) {
        if (util::starts_with(current, "-")) {
            for (const CLI::App* level = command; level; level = level->get_parent())
                for (const CLI::Option* option : level->get_options())
                    if (option->nonpositional())
                        for (const std::string& name : spellings(*option))
                            candidates.push_back(name);
        } else {
            for (const CLI::App* sub : visible_subcommands(*command))
                candidates.push_back(sub->get_name());
            auto arguments = positionals(*command);
            if (positional < arguments.size())
                for (const std::string& value :
                     positional_values(*command, *arguments[positional], database))
                    candidates.push_back(value);
        }
    }

    std::vector<std::string> matching;
    for (const std::string& candidate : candidates)
        if ((candidate.front() == '@' || util::starts_with(candidate, current)) &&
            std::find(matching.begin(), matching.end(), candidate) == matching.end())
            matching.push_back(candidate);
    return matching;
}

int complete_command(const CLI::App& app, const GlobalOptions& global,
                     std::vector<std::string> words) {
    if (!words.empty() && words.front() == "--")
        words.erase(words.begin());
    for (const std::string& candidate : completions(app, words, global.db))
        std::cout << candidate << "\n";
    return k_exit_ok;
}

} // namespace rig::cli
