// SPDX-License-Identifier: MIT
// A build folder configured: tinyconfig, the fragments and options, olddefconfig, checked;
// skipped when nothing it reads changed since the folder's last configure.
#include "kernel/configure.hpp"

#include "kernel/gc.hpp"
#include "proc/git.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

namespace rig::kernel {

namespace fs = std::filesystem;

namespace {

// The record of a folder's last configure: build-HASH.configured beside build-HASH.
fs::path stamp_path(const fs::path& out) {
    return out.string() + ".configured";
}

std::string stamp_text(const std::string& inputs, const std::string& dot_config) {
    return inputs + ".config " + util::sha256_hex(dot_config) + "\n";
}

// tinyconfig's .config for a tree's Kconfig inputs and a toolchain, kept in the cache:
// tinyconfig alone is most of a configure (14 s of 19 s here: allnoconfig, a merge and
// olddefconfig of its own), and its result depends on nothing a request changes. A config
// bisect configures one tree a dozen times; every new config of a tree once.
fs::path tinyconfig_path(const fs::path& cache, const std::string& tree_inputs) {
    return cache / "git" / "tinyconfig" / util::sha256_hex(tree_inputs).substr(0, 16);
}

} // namespace

Expected<std::string> kconfig_inputs(const fs::path& src) {
    proc::RunOptions options;
    options.timeout = std::chrono::minutes(5);
    auto listed = RIG_TRY(
        proc::run_git({"-C", src.string(), "ls-tree", "-r", "--full-tree", "HEAD"}, options));
    if (listed.exit_code != 0)
        return fail(ErrorKind::infra,
                    "cannot list the tree in " + src.string() + ": " + tail(listed.err, 500));
    // Filtered here rather than by pathspec: ls-tree takes no globs.
    std::string kept;
    for (std::string_view line : util::split(listed.out, '\n')) {
        auto tab = line.find('\t');
        if (tab == std::string_view::npos)
            continue;
        std::string_view path = line.substr(tab + 1);
        std::string_view name = path.substr(path.rfind('/') + 1);
        // The top Makefile too: it exports the variables Kconfig's $(shell) calls read.
        bool read =
            path == "Makefile" || util::starts_with(name, "Kconfig") ||
            util::starts_with(path, "scripts/") ||
            path.find("/configs/") != std::string_view::npos ||
            (util::starts_with(path, "arch/") && path.find("/tools/") != std::string_view::npos);
        if (read)
            kept.append(line).push_back('\n');
    }
    std::string linker = RIG_TRY(first_line_of({"ld", "--version"}));
    return "tree " + util::sha256_hex(kept) + "\nld " + linker + "\n";
}

Expected<std::pair<std::vector<std::string>, ConfigValues>>
configure(const ConfinedTree& tree, const RequestedConfig& config, const std::string& compiler,
          const fs::path& cache, Builder& builder) {
    const fs::path& out = tree.real_out();
    std::error_code ec;
    fs::create_directories(out, ec);
    touch(out);
    const fs::path dot_config = out / ".config";
    const fs::path stamp = stamp_path(out);
    std::string previous = fs::exists(dot_config) ? util::read_file(dot_config) : std::string();
    const std::string tree_inputs =
        "compiler " + compiler + "\n" + RIG_TRY(kconfig_inputs(tree.real_src()));
    const std::string inputs = "request " + util::sha256_hex(config.text) + "\n" + tree_inputs;
    if (!previous.empty() && fs::exists(stamp) &&
        util::read_file(stamp) == stamp_text(inputs, previous)) {
        builder.log("rig: configuration unchanged since this folder's last configure (request, "
                    "Kconfig files, toolchain): tinyconfig and olddefconfig skipped");
        touch(stamp);
        ConfigValues actual = parse_config(previous);
        return std::pair{unmet(config.checked, actual), std::move(actual)};
    }
    builder.report("configuring");
    fs::remove(stamp, ec);
    auto previous_time = fs::last_write_time(dot_config, ec);
    RIG_TRY(tree.hand_over());
    auto make = [&](const std::string& target) {
        return builder.run_checked(
            {"make", "-C", tree.src().string(), "O=" + tree.out().string(), target}, "/",
            tree.confinement());
    };
    const fs::path tiny = tinyconfig_path(cache, tree_inputs);
    std::string base = util::read_file(tiny);
    if (base.empty()) {
        RIG_TRY(make("tinyconfig"));
        base = util::read_file(dot_config);
        fs::create_directories(tiny.parent_path(), ec);
        RIG_TRY(util::write_file_atomically(tiny, base));
    } else {
        builder.log("rig: tinyconfig's .config for these Kconfig files and this toolchain "
                    "from " +
                    tiny.string());
        touch(tiny);
    }
    RIG_TRY(util::write_file_atomically(dot_config, merge(base, config.values)));
    RIG_TRY(tree.hand_over()); // the .config just written
    RIG_TRY(make("olddefconfig"));
    std::string final_config = util::read_file(dot_config);
    // An unchanged .config keeps its old time: make then has nothing to re-sync.
    if (!previous.empty() && final_config == previous)
        fs::last_write_time(dot_config, previous_time, ec);
    RIG_TRY(util::write_file_atomically(stamp, stamp_text(inputs, final_config)));
    ConfigValues actual = parse_config(final_config);
    return std::pair{unmet(config.checked, actual), std::move(actual)};
}

} // namespace rig::kernel
