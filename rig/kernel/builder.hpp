// SPDX-License-Identifier: MIT
// Internal to kernel/: one git kernel build in progress (its log, the commands it runs and
// what it reports), and what the build steps share.
#pragma once

#include "kernel/build.hpp"
#include "proc/process.hpp"
#include "util/error.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rig::kernel {

// Fixed build identity: the image then depends on the inputs alone, and init/version.c
// does not change from one build to the next.
inline const std::vector<std::string> k_build_identity{
    "KBUILD_BUILD_USER=rig", "KBUILD_BUILD_HOST=rig",
    "KBUILD_BUILD_TIMESTAMP=Thu Jan  1 00:00:00 UTC 1970"};

// The last `bytes` of `text`, trimmed: the end of a command's output for a message.
std::string tail(std::string_view text, size_t bytes);

// The first line a tool prints of itself (`gcc --version`, `ld --version`), trimmed; an
// infra error naming the command when it fails.
Expected<std::string> first_line_of(const std::vector<std::string>& argv);

// make's -j when the settings leave it to rig: the CPUs online.
int default_jobs();

// One build in progress: its log and what it reports.
class Builder final {
public:
    using Clock = std::chrono::steady_clock;

    Builder(const BuildSettings& settings, std::filesystem::path log);

    void report(const std::string& phase, size_t objects = 0);
    // What make is expected to do; set for a build from an empty folder.
    void expect(const ColdBuildStats& stats) { m_expected = stats; }
    double elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
    void log(const std::string& text);
    const std::filesystem::path& log_path() const { return m_log_path; }

    // Runs a command to completion with its output in the log. A make on a git tree
    // passes its tree's confinement (kernel/confine.hpp) and no `cwd`.
    Expected<proc::RunResult> run(const std::vector<std::string>& argv,
                                  const std::filesystem::path& cwd,
                                  const proc::Confinement& confinement = {},
                                  const std::map<std::string, std::string>& env = {});

    // Like run(), but a non-zero exit is an infrastructure error.
    Expected<proc::RunResult> run_checked(const std::vector<std::string>& argv,
                                          const std::filesystem::path& cwd,
                                          const proc::Confinement& confinement = {});

    // The long make run, in make.cpp with the rest of running make: its output goes to a
    // file that is read while it grows, to count objects for the progress line. Returns
    // make's exit status.
    Expected<int> make(const std::vector<std::string>& argv, const std::filesystem::path& make_log,
                       const std::map<std::string, std::string>& env,
                       const proc::Confinement& confinement);
    size_t objects() const { return m_objects; }

private:
    const BuildSettings& m_settings;
    std::filesystem::path m_log_path;
    std::ofstream m_log;
    std::string m_phase;
    size_t m_objects = 0;
    ColdBuildStats m_expected;
    Clock::time_point m_start = Clock::now();
};

} // namespace rig::kernel
