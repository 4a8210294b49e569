// SPDX-License-Identifier: MIT
// One git kernel build in progress: its log, the commands it runs and what it reports.
#include "kernel/builder.hpp"

#include "proc/git.hpp"
#include "util/strings.hpp"

#include <unistd.h>

namespace rig::kernel {

namespace fs = std::filesystem;

std::string tail(std::string_view text, size_t bytes) {
    return std::string(util::trim(text.substr(text.size() > bytes ? text.size() - bytes : 0)));
}

Expected<std::string> first_line_of(const std::vector<std::string>& argv) {
    proc::RunOptions options;
    options.timeout = std::chrono::minutes(1);
    auto result = RIG_TRY(proc::run(argv, options));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, util::join(argv, " ") + " failed: " + tail(result.err, 500));
    return std::string(util::trim(util::split(result.out, '\n').at(0)));
}

int default_jobs() {
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? static_cast<int>(cpus) : 1;
}

Builder::Builder(const BuildSettings& settings, fs::path log)
    : m_settings(settings), m_log_path(std::move(log)) {
    m_log.open(m_log_path, std::ios::binary | std::ios::trunc);
}

void Builder::report(const std::string& phase, size_t objects) {
    m_phase = phase;
    if (m_settings.progress)
        m_settings.progress({phase, objects, elapsed(), m_expected.objects, m_expected.seconds});
}

void Builder::log(const std::string& text) {
    m_log << text;
    if (!text.empty() && text.back() != '\n')
        m_log << '\n';
    m_log.flush();
}

Expected<proc::RunResult> Builder::run(const std::vector<std::string>& argv, const fs::path& cwd,
                                       const proc::Confinement& confinement,
                                       const std::map<std::string, std::string>& env) {
    log("$ " + util::join(argv, " "));
    proc::RunOptions options;
    options.cwd = cwd;
    options.timeout = std::chrono::minutes(30);
    options.confinement = confinement;
    // git and the kernel's own scripts alike: messages rig reads, no prompt.
    options.env = proc::git_environment();
    options.env.insert(env.begin(), env.end());
    auto result = RIG_TRY(proc::run(argv, options));
    log(result.out);
    log(result.err);
    if (result.exit_code != 0)
        log("(exit " + std::to_string(result.exit_code) + ")");
    return result;
}

Expected<proc::RunResult> Builder::run_checked(const std::vector<std::string>& argv,
                                               const fs::path& cwd,
                                               const proc::Confinement& confinement) {
    auto result = RIG_TRY(run(argv, cwd, confinement));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra,
                    util::join(argv, " ") + " failed (exit " + std::to_string(result.exit_code) +
                        "): " + tail(result.err, 1500) + " (log: " + m_log_path.string() + ")");
    return result;
}

} // namespace rig::kernel
