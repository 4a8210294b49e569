// SPDX-License-Identifier: MIT
// A build folder configured: tinyconfig, the fragments and options, olddefconfig, checked.
#include "kernel/configure.hpp"

#include "kernel/gc.hpp"
#include "util/file.hpp"

namespace rig::kernel {

namespace fs = std::filesystem;

Expected<std::pair<std::vector<std::string>, ConfigValues>>
configure(const ConfinedTree& tree, const RequestedConfig& config, Builder& builder) {
    builder.report("configuring");
    const fs::path& out = tree.real_out();
    std::error_code ec;
    fs::create_directories(out, ec);
    touch(out);
    const fs::path dot_config = out / ".config";
    std::string previous = fs::exists(dot_config) ? util::read_file(dot_config) : std::string();
    auto previous_time = fs::last_write_time(dot_config, ec);
    RIG_TRY(tree.hand_over());
    auto make = [&](const std::string& target) {
        return builder.run_checked(
            {"make", "-C", tree.src().string(), "O=" + tree.out().string(), target}, "/",
            tree.confinement());
    };
    RIG_TRY(make("tinyconfig"));
    RIG_TRY(
        util::write_file_atomically(dot_config, merge(util::read_file(dot_config), config.values)));
    RIG_TRY(tree.hand_over()); // the .config just written
    RIG_TRY(make("olddefconfig"));
    std::string final_config = util::read_file(dot_config);
    // An unchanged .config keeps its old time: make then has nothing to re-sync.
    if (!previous.empty() && final_config == previous)
        fs::last_write_time(dot_config, previous_time, ec);
    ConfigValues actual = parse_config(final_config);
    return std::pair{unmet(config.values, actual), std::move(actual)};
}

} // namespace rig::kernel
