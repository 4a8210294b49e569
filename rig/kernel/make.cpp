// SPDX-License-Identifier: MIT
// Running make on a kernel: its command line, progress from its output, cold-build stats
// and the errors of a failed build.
#include "kernel/make.hpp"

#include "util/file.hpp"
#include "util/follow.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <sstream>

namespace rig::kernel {

namespace fs = std::filesystem;

// The long make run: its output goes to a file that is read while it grows, to count
// objects for the progress line. Returns make's exit status.
Expected<int> Builder::make(const std::vector<std::string>& argv, const fs::path& make_log,
                            const std::map<std::string, std::string>& env,
                            const proc::Confinement& confinement) {
    log("$ " + util::join(argv, " "));
    proc::SpawnOptions options;
    options.cwd = "/";
    options.confinement = confinement;
    options.env = env;
    options.env["LC_ALL"] = "C";
    options.stdout_file = make_log;
    auto child = RIG_TRY(proc::Child::spawn(argv, options));
    auto deadline = Clock::now() + m_settings.timeout;
    util::FileFollower follower(make_log);
    util::LineSplitter lines;
    size_t objects = 0;
    std::optional<int> status;
    while (true) {
        status = child->wait_for(std::chrono::seconds(2));
        for (std::string chunk; !(chunk = follower.read_new()).empty();)
            lines.feed(chunk, [&](std::string_view line) { objects += is_object_line(line); });
        report(m_phase, objects);
        if (status)
            break;
        if (m_settings.interrupted && *m_settings.interrupted) {
            child->stop();
            log("rig: interrupted; make was stopped");
            return fail(ErrorKind::interrupted, "interrupted during the kernel build");
        }
        if (Clock::now() > deadline) {
            child->stop();
            log("rig: make ran longer than " + std::to_string(m_settings.timeout.count()) +
                " minutes and was stopped");
            status = -1;
            break;
        }
    }
    m_objects = objects;
    return *status;
}

bool is_object_line(std::string_view line) {
    if (!util::starts_with(line, "  "))
        return false;
    line.remove_prefix(2);
    size_t end = line.find(' ');
    if (end == std::string_view::npos)
        return false;
    std::string_view tag = line.substr(0, end);
    static const std::vector<std::string_view> k_tags{"CC",     "AS",  "AR",  "LD",     "HOSTCC",
                                                      "HOSTLD", "CPP", "LDS", "OBJCOPY"};
    if (std::find(k_tags.begin(), k_tags.end(), tag) == k_tags.end())
        return false;
    std::string_view rest = util::trim(line.substr(end));
    return !rest.empty();
}

std::string first_errors(std::string_view log, size_t max_lines) {
    std::vector<std::string> lines = util::split(log, '\n');
    auto pick = [&](auto&& wanted) {
        std::vector<std::string> found;
        for (const std::string& line : lines)
            if (found.size() < max_lines && wanted(line))
                found.emplace_back(util::trim(line));
        return found;
    };
    auto found = pick([](const std::string& line) {
        return line.find(": error:") != std::string::npos ||
               line.find(": fatal error:") != std::string::npos ||
               line.find("undefined reference to") != std::string::npos;
    });
    if (found.empty())
        found = pick([](const std::string& line) {
            return line.find("*** ") != std::string::npos ||
                   (util::starts_with(line, "make") && line.find("Error") != std::string::npos);
        });
    if (found.empty()) {
        size_t from = lines.size() > max_lines ? lines.size() - max_lines : 0;
        found.assign(lines.begin() + static_cast<std::ptrdiff_t>(from), lines.end());
    }
    return util::join(found, "\n");
}

bool ProgressPacer::due(const BuildProgress& progress) {
    if (m_started && progress.phase == m_phase && progress.elapsed_seconds - m_last < m_every)
        return false;
    m_started = true;
    m_phase = progress.phase;
    m_last = progress.elapsed_seconds;
    return true;
}

std::string progress_text(const BuildProgress& progress) {
    std::string text = progress.phase;
    if (progress.objects > 0 || progress.expected_objects > 0) {
        text += ", " + std::to_string(progress.objects);
        if (progress.expected_objects > 0)
            text += "/" + std::to_string(progress.expected_objects);
        text += " objects";
    }
    // The remaining share of the objects at the earlier build's pace; never below zero,
    // since this build may well be slower.
    if (progress.expected_objects > 0 && progress.expected_seconds > 0) {
        double done = std::min(1.0, static_cast<double>(progress.objects) /
                                        static_cast<double>(progress.expected_objects));
        auto left = std::chrono::milliseconds(
            static_cast<int64_t>(progress.expected_seconds * (1.0 - done) * 1000.0));
        text +=
            left.count() > 0 ? ", about " + util::format_duration(left) + " left" : ", nearly done";
    }
    return text;
}

namespace {

fs::path cold_build_stats_file(const fs::path& cache, const std::string& config_hash) {
    return cache / "git" / "stats" / config_hash;
}

} // namespace

std::optional<ColdBuildStats> load_cold_build_stats(const fs::path& cache,
                                                    const std::string& config_hash) {
    std::istringstream in(util::read_file(cold_build_stats_file(cache, config_hash)));
    ColdBuildStats stats;
    if (!(in >> stats.objects >> stats.seconds) || stats.objects == 0 || stats.seconds <= 0)
        return std::nullopt;
    return stats;
}

Expected<void> save_cold_build_stats(const fs::path& cache, const std::string& config_hash,
                                     const ColdBuildStats& stats) {
    fs::path file = cold_build_stats_file(cache, config_hash);
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    return util::write_file_atomically(file, std::to_string(stats.objects) + " " +
                                                 std::to_string(stats.seconds) + "\n");
}

MakeTools make_tools(ConfinedTree& tree, const BuildSettings& settings) {
    MakeTools tools;
    if (proc::find_program("ccache")) {
        tools.args.push_back("CC=ccache gcc");
        // Inside rig's cache: builds of every repository share it, and nothing outside
        // rig's cache is written.
        tools.env["CCACHE_DIR"] =
            tree.writable(settings.cache / "git" / "ccache", "ccache").string();
        // Depend mode: kbuild's -Wp,-MMD hands ccache the headers, so a miss runs no
        // second preprocessor. A cold build then costs what plain gcc does (1.01x the CPU
        // time, against 1.45x in ccache's default mode: tests/bench/ccache-modes), and
        // hits are direct hits as before.
        tools.env["CCACHE_DEPEND"] = "1";
    }
    tools.args.insert(tools.args.end(), k_build_identity.begin(), k_build_identity.end());
    return tools;
}

Expected<std::optional<std::string>> run_make(Builder& builder, ConfinedTree& tree,
                                              const std::string& target, bool modules,
                                              const BuildSettings& settings,
                                              const std::string& config_hash) {
    // All cores unless told, ccache when there is one, and the build identity that keeps
    // images reproducible.
    MakeTools tools = make_tools(tree, settings);
    std::vector<std::string> argv{
        "make", "-C", tree.src().string(), "O=" + tree.out().string(),
        "-j" + std::to_string(settings.jobs > 0 ? settings.jobs : default_jobs())};
    argv.insert(argv.end(), tools.args.begin(), tools.args.end());
    argv.push_back(target);
    if (modules)
        argv.push_back("modules");
    const fs::path make_log = builder.log_path().string() + ".make";
    // A folder without vmlinux builds everything: a build of the same config that did so
    // before says how many objects and how long.
    const bool cold = !fs::exists(tree.real_out() / "vmlinux");
    if (cold)
        if (auto stats = load_cold_build_stats(settings.cache, config_hash))
            builder.expect(*stats);
    RIG_TRY(tree.hand_over());
    const double make_started = builder.elapsed();
    int status = RIG_TRY(builder.make(argv, make_log, tools.env, tree.confinement()));
    std::string make_output = util::read_file(make_log);
    builder.log(make_output);
    std::error_code ec;
    fs::remove(make_log, ec);
    builder.log("rig: make exited " + std::to_string(status) + ", " +
                std::to_string(builder.objects()) + " objects");
    if (status != 0)
        return std::optional<std::string>(first_errors(make_output));
    if (cold)
        RIG_TRY(save_cold_build_stats(settings.cache, config_hash,
                                      {builder.objects(), builder.elapsed() - make_started}));
    return std::optional<std::string>();
}

} // namespace rig::kernel
