// SPDX-License-Identifier: MIT
// Git kernels: one commit of a repository, patched and configured, built out of tree into
// a cached artifact. A second request for the same inputs builds nothing.
// Modules built against such a kernel: kernel/external.hpp; the cache's gc: kernel/gc.hpp.
#pragma once

#include "core/scenario.hpp"
#include "core/status.hpp"
#include "kernel/artifact.hpp"
#include "kernel/config.hpp"
#include "proc/process.hpp"
#include "util/error.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::kernel {

struct GitRequest {
    std::filesystem::path repo; // absolute
    std::string ref;
    std::vector<std::string> fragments;               // names, in apply order
    std::vector<std::filesystem::path> patches;       // absolute, applied in order with `git am`
    std::map<std::string, std::string> options;       // CONFIG_X -> value as the scenario gave it
    std::vector<std::filesystem::path> fragment_dirs; // searched before rig's own fragments
};

// A scenario's git kernel with one cell's fragments. Relative repository, patch and
// fragment paths are relative to `base_dir`, the scenario file's folder.
GitRequest git_request(const core::Kernel& kernel, const std::vector<std::string>& fragments,
                       const std::filesystem::path& base_dir);

struct BuildProgress {
    std::string phase;  // resolving, waiting for lock, checkout, patching, configuring, ...
    size_t objects = 0; // make's "  CC  path" style lines so far
    double elapsed_seconds = 0;
    // A build from an empty folder of a config built that way before expects as many
    // objects and about as long as that one took; 0 when nothing is known (the first cold
    // build of a config, and incremental builds, whose share of the work make decides).
    size_t expected_objects = 0;
    double expected_seconds = 0;
};

// "building, 1234/2710 objects, about 4m 10s left" (objects and time only when known).
std::string progress_text(const BuildProgress& progress);

// Which of a build's progress reports get a line: one of a new phase, and then one every
// `every` seconds. A log (stdout not a terminal) gets one at least every 15 s, so that a
// cold build of several minutes shows its count and ETA going on; a terminal's redrawn
// line, every second.
class ProgressPacer final {
public:
    static constexpr double k_log_seconds = 15;
    static constexpr double k_terminal_seconds = 1;

    explicit ProgressPacer(double every) : m_every(every) {}
    static ProgressPacer for_output(bool tty) {
        return ProgressPacer(tty ? k_terminal_seconds : k_log_seconds);
    }
    bool due(const BuildProgress& progress);

private:
    double m_every;
    std::string m_phase;
    double m_last = 0;
    bool m_started = false;
};

// What the last build of a config from an empty folder took, kept in the cache (so that
// the next one, after a gc or in another clone, can say how far it is).
struct ColdBuildStats {
    size_t objects = 0;
    double seconds = 0;
};
std::optional<ColdBuildStats> load_cold_build_stats(const std::filesystem::path& cache,
                                                    const std::string& config_hash);
Expected<void> save_cold_build_stats(const std::filesystem::path& cache,
                                     const std::string& config_hash, const ColdBuildStats& stats);

struct BuildSettings {
    std::filesystem::path cache;                        // kernel::default_cache_dir() in rig itself
    int jobs = 0;                                       // make -j; 0 = the CPUs rig may use
    std::function<void(const BuildProgress&)> progress; // called at least every few seconds
    std::chrono::minutes timeout{240};
    // When set: make is stopped within seconds and build_git fails with
    // ErrorKind::interrupted (nothing recorded), so Ctrl-C does not wait for a cold build.
    // make deletes its half-written targets.
    const std::atomic<bool>* interrupted = nullptr;
    // Whom a git tree's Makefiles run as (kernel/confine.hpp): the unprivileged user when
    // rig is root; nullopt runs them as rig's own user. Without a network either way.
    std::optional<proc::Credentials> make_user;
};

struct BuildResult {
    core::BuildOutcome outcome = core::BuildOutcome::ok;
    bool cache_hit = false; // the artifact was cached: nothing ran but `git rev-parse`
    std::string repo;
    std::string commit; // the ref, resolved
    std::string config_hash;
    std::string compiler; // `gcc --version`, first line
    std::string cache_key;
    double seconds = 0; // 0 for a cache hit
    std::filesystem::path log;
    std::string error_lines;          // why it is not ok: compiler errors, the patch, the options
    std::optional<Artifact> artifact; // set exactly when outcome is ok
};

// The commit `ref` names in the git repository `repo` (read-only there). A missing
// repository, a folder that is not one, or a ref that names no commit is a config error.
Expected<std::string> resolve_commit(const std::filesystem::path& repo, const std::string& ref);

// Resolves the ref in the user's repository (read-only there), then returns the cached
// artifact for (commit, patches, config hash, compiler), or builds it: rig's own clone of
// the repository (cache/git/<repo>/src, sharing the user's objects) is checked out at the
// commit, patches are applied with `git am`, tinyconfig plus the fragments and options goes
// through olddefconfig and is checked, and `make O=cache/git/<repo>/build-<config hash>`
// builds, with ccache when installed. The build folder persists, so the next commit with
// the same config builds incrementally; a config's first build starts from a copy of the
// repository's newest finished build folder, so a config that differs in a few options
// rebuilds only what they reach. Bad requests (no repository, unknown ref, missing
// patch file or fragment) are errors; a failed build or config is a result.
Expected<BuildResult> build_git(const GitRequest& request, const BuildSettings& settings);

// A config's build folder in its repository's folder (cache/git/<repo>): every commit of
// that config builds there, incrementally.
std::filesystem::path build_folder(const std::filesystem::path& repo_dir,
                                   const std::string& config_hash);

// The .config build_git made `request`'s kernel with, read from its build folder; nullopt
// when no build of it is there (none ran, or gc removed the folder). Not the artifact's
// copy: two configs that build the same image (options no code reads) share one artifact.
Expected<std::optional<ConfigValues>> built_config(const GitRequest& request,
                                                   const std::filesystem::path& cache);

struct ConfigResult {
    core::BuildOutcome outcome = core::BuildOutcome::ok; // ok or config_error, never build_failed
    std::string commit;
    std::string config_hash;
    size_t requested = 0;         // options the fragments and `options:` ask for
    std::filesystem::path config; // the resolved .config
    std::filesystem::path log;
    std::string error_lines; // the options olddefconfig dropped or changed, or the patch
};

// The configuration step of build_git alone: checks out and patches the commit, resolves
// tinyconfig plus the fragments and options through olddefconfig in a folder of its own
// (cache/git/<repo>/config-<config hash>) and checks every requested option, in seconds.
// Finds a fragment whose options do not survive before a build is paid for.
Expected<ConfigResult> configure_git(const GitRequest& request, const BuildSettings& settings);

// The first compiler or make error lines of a build log, at most `max_lines`.
std::string first_errors(std::string_view log, size_t max_lines = 8);

// True for a line of make's output that reports one object (`  CC      fs/9p/v9fs.o`).
bool is_object_line(std::string_view line);

} // namespace rig::kernel
