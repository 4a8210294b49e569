// SPDX-License-Identifier: MIT
// The real commit builder: git builds in the kernel cache, recorded in the database.
#include "bisect/builder.hpp"

#include "guest/initramfs.hpp"
#include "host/account.hpp"
#include "run/kernel_records.hpp"
#include "util/clock.hpp"
#include "util/units.hpp"

namespace rig::bisect {

namespace {

class LocalBuilder final : public CommitBuilder {
public:
    LocalBuilder(std::filesystem::path cache, store::Database& db)
        : m_cache(std::move(cache)), m_db(db) {}

    Expected<std::optional<kernel::BuildResult>>
    build(const kernel::GitRequest& request, const std::string& kernel_name,
          const std::string& prefix, std::ostream& out,
          const std::atomic<bool>& interrupted) override {
        kernel::BuildSettings build;
        build.cache = m_cache;
        build.interrupted = &interrupted;
        build.make_user = RIG_TRY(host::untrusted_user());
        // The bisect's output is a log: its build's count and ETA at least every 15 s.
        kernel::ProgressPacer pacer(kernel::ProgressPacer::k_log_seconds);
        build.progress = [&](const kernel::BuildProgress& status) {
            if (!pacer.due(status))
                return;
            out << util::log_line(util::real_clock(),
                                  prefix + kernel::progress_text(status) + ", " +
                                      util::format_duration(status.elapsed_seconds,
                                                            util::DurationStyle::progress))
                << "\n"
                << std::flush;
        };
        auto built = kernel::build_git(request, build);
        if (!built && built.error().kind == ErrorKind::interrupted)
            return std::nullopt;
        auto result = RIG_TRY(std::move(built));
        RIG_TRY(run::record_build(m_db, result, kernel_name));
        return result;
    }

    Expected<kernel::ConfigResult> configure(const kernel::GitRequest& request,
                                             std::ostream& out) override {
        kernel::BuildSettings build;
        build.cache = m_cache;
        build.make_user = RIG_TRY(host::untrusted_user());
        build.progress = [&](const kernel::BuildProgress& status) {
            out << util::log_line(util::real_clock(), "configuring: " + status.phase) << "\n"
                << std::flush;
        };
        return kernel::configure_git(request, build);
    }

    Expected<std::filesystem::path> initramfs(const kernel::Artifact& artifact) override {
        return guest::base_initramfs(artifact, m_cache);
    }

    Expected<void> build_ahead(const kernel::GitRequest& request, int jobs,
                               const std::atomic<bool>& interrupted) override {
        kernel::BuildSettings build;
        build.cache = m_cache;
        build.jobs = jobs;
        build.interrupted = &interrupted;
        build.make_user = RIG_TRY(host::untrusted_user());
        auto built = kernel::build_git(request, build);
        if (!built && built.error().kind != ErrorKind::interrupted)
            return tl::unexpected(built.error());
        return {};
    }

private:
    std::filesystem::path m_cache;
    store::Database& m_db;
};

} // namespace

std::unique_ptr<CommitBuilder> make_commit_builder(const std::filesystem::path& cache,
                                                   store::Database& db) {
    return std::make_unique<LocalBuilder>(cache, db);
}

} // namespace rig::bisect
