// SPDX-License-Identifier: MIT
// Git kernel builds: rig's clone, `git am`, tinyconfig + fragments, `make O=`, the cache.
#include "kernel/build.hpp"

#include "kernel/config.hpp"
#include "kernel/module.hpp"
#include "proc/git.hpp"
#include "proc/process.hpp"
#include "util/file.hpp"
#include "util/follow.hpp"
#include "util/hash.hpp"
#include "util/lock.hpp"
#include "util/strings.hpp"
#include "util/units.hpp"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <variant>

namespace rig::kernel {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Bump when the recipe changes what a build produces, so old artifacts are not reused.
constexpr std::string_view k_recipe = "rig git kernel recipe 1";
// Fixed build identity: the image then depends on the inputs alone, and init/version.c
// does not change from one build to the next.
const std::vector<std::string> k_build_identity{
    "KBUILD_BUILD_USER=rig", "KBUILD_BUILD_HOST=rig",
    "KBUILD_BUILD_TIMESTAMP=Thu Jan  1 00:00:00 UTC 1970"};

std::string tail(std::string_view text, size_t bytes) {
    return std::string(util::trim(text.substr(text.size() > bytes ? text.size() - bytes : 0)));
}

std::string utc_stamp() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &tm);
    return text;
}

// One build in progress: its log and what it reports.
class Builder final {
public:
    Builder(const BuildSettings& settings, fs::path log)
        : m_settings(settings), m_log_path(std::move(log)) {
        m_log.open(m_log_path, std::ios::binary | std::ios::trunc);
    }

    void report(const std::string& phase, size_t objects = 0) {
        m_phase = phase;
        if (m_settings.progress)
            m_settings.progress(
                {phase, objects, elapsed(), m_expected.objects, m_expected.seconds});
    }
    // What make is expected to do; set for a build from an empty folder.
    void expect(const ColdBuildStats& stats) { m_expected = stats; }
    double elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
    void log(const std::string& text) {
        m_log << text;
        if (!text.empty() && text.back() != '\n')
            m_log << '\n';
        m_log.flush();
    }
    const fs::path& log_path() const { return m_log_path; }

    // Runs a command to completion with its output in the log.
    Expected<proc::RunResult> run(const std::vector<std::string>& argv, const fs::path& cwd,
                                  std::chrono::minutes timeout = std::chrono::minutes(30)) {
        log("$ " + util::join(argv, " "));
        proc::RunOptions options;
        options.cwd = cwd;
        options.timeout = timeout;
        // git and the kernel's own scripts alike: messages rig reads, no prompt.
        options.env = proc::git_environment();
        auto result = RIG_TRY(proc::run(argv, options));
        log(result.out);
        log(result.err);
        if (result.exit_code != 0)
            log("(exit " + std::to_string(result.exit_code) + ")");
        return result;
    }

    // Like run(), but a non-zero exit is an infrastructure error.
    Expected<proc::RunResult> run_checked(const std::vector<std::string>& argv,
                                          const fs::path& cwd) {
        auto result = RIG_TRY(run(argv, cwd));
        if (result.exit_code != 0)
            return fail(ErrorKind::infra, util::join(argv, " ") + " failed (exit " +
                                              std::to_string(result.exit_code) +
                                              "): " + tail(result.err, 1500) +
                                              " (log: " + m_log_path.string() + ")");
        return result;
    }

    // The long make run: its output goes to a file that is read while it grows, to count
    // objects for the progress line. Returns make's exit status.
    Expected<int> make(const std::vector<std::string>& argv, const fs::path& make_log,
                       const std::map<std::string, std::string>& env) {
        log("$ " + util::join(argv, " "));
        proc::SpawnOptions options;
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
    size_t objects() const { return m_objects; }

private:
    const BuildSettings& m_settings;
    fs::path m_log_path;
    std::ofstream m_log;
    std::string m_phase;
    size_t m_objects = 0;
    ColdBuildStats m_expected;
    Clock::time_point m_start = Clock::now();
};

Expected<std::string> git_output(const std::vector<std::string>& args, const fs::path& repo,
                                 ErrorKind kind, const std::string& what) {
    std::vector<std::string> argv{"-C", repo.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    proc::RunOptions options;
    options.timeout = std::chrono::minutes(5);
    auto result = RIG_TRY(proc::run_git(argv, options));
    if (result.exit_code != 0)
        return fail(kind, what + (result.err.empty() ? "" : ": " + tail(result.err, 500)));
    return std::string(util::trim(result.out));
}

Expected<std::string> compiler_version() {
    proc::RunOptions options;
    options.timeout = std::chrono::minutes(1);
    auto result = RIG_TRY(proc::run({"gcc", "--version"}, options));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, "gcc --version failed: " + tail(result.err, 500));
    return std::string(util::trim(util::split(result.out, '\n').at(0)));
}

int default_jobs() {
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? static_cast<int>(cpus) : 1;
}

fs::path absolute_from(const fs::path& base, const std::string& path) {
    fs::path p(path);
    return p.is_absolute() ? p.lexically_normal() : fs::absolute(base / p).lexically_normal();
}

uint64_t tree_size(const fs::path& path) {
    uint64_t bytes = 0;
    std::error_code ec;
    if (fs::is_regular_file(path, ec))
        return fs::file_size(path, ec);
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && !it->is_symlink(ec))
            bytes += it->file_size(ec);
    return bytes;
}

} // namespace

// Marks a file or folder as used now, for `rig kernel gc`.
void touch(const fs::path& path) {
    std::error_code ec;
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
}

GitRequest git_request(const core::Kernel& kernel, const std::vector<std::string>& fragments,
                       const fs::path& base_dir) {
    GitRequest request;
    request.repo = absolute_from(base_dir, kernel.repo);
    request.ref = kernel.ref;
    request.fragments = fragments;
    for (const std::string& patch : kernel.patches)
        request.patches.push_back(absolute_from(base_dir, patch));
    request.options = kernel.options;
    request.fragment_dirs = {fs::absolute(base_dir), fs::absolute(base_dir / "kernels")};
    return request;
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

namespace {

// What a request resolves to before anything is checked out: the commit, the requested
// configuration and the cache key of the artifact it would build.
struct Resolved {
    std::string commit;
    RequestedConfig config;
    std::string config_hash;
    std::string compiler;
    std::string cache_key;
};

Expected<Resolved> resolve(const GitRequest& request) {
    if (!fs::is_directory(request.repo))
        return fail(ErrorKind::config,
                    "kernel repository " + request.repo.string() + " does not exist");
    RIG_TRY(git_output({"rev-parse", "--git-dir"}, request.repo, ErrorKind::config,
                       request.repo.string() + " is not a git repository"));
    Resolved resolved;
    resolved.commit = RIG_TRY(git_output(
        {"rev-parse", "--verify", "--quiet", "--end-of-options", request.ref + "^{commit}"},
        request.repo, ErrorKind::config,
        "ref '" + request.ref + "' is not a commit in " + request.repo.string()));

    std::vector<Fragment> fragments;
    for (const std::string& name : request.fragments) {
        std::string text = RIG_TRY(fragment_text(name, request.fragment_dirs));
        fragments.push_back({name, std::move(text)});
    }
    resolved.config = compose(fragments, request.options);
    resolved.config_hash = util::sha256_hex(resolved.config.text).substr(0, 16);
    resolved.compiler = RIG_TRY(compiler_version());

    std::string key_text = std::string(k_recipe) + "\ncommit=" + resolved.commit +
                           "\nconfig=" + resolved.config_hash + "\ncompiler=" + resolved.compiler +
                           "\n";
    for (const fs::path& patch : request.patches) {
        if (!fs::is_regular_file(patch))
            return fail(ErrorKind::config, "patch " + patch.string() + " does not exist");
        key_text += "patch=" + RIG_TRY(util::sha256_file(patch)) + "\n";
    }
    resolved.cache_key = util::sha256_hex(key_text).substr(0, 16);
    return resolved;
}

// rig's folder for one repository, held under its lock: two rigs building the same
// repository take turns, since they share its clone and build folders. Keyed by the
// resolved path, so a repository reached through a symlink shares its build folders (and
// their incremental builds) with the same repository named directly.
struct Repository {
    fs::path dir;
    util::FileLock lock;
};

Expected<Repository> open_repository(const GitRequest& request, const fs::path& cache,
                                     const std::function<void()>& waiting) {
    std::error_code canonical_error;
    fs::path resolved = fs::canonical(request.repo, canonical_error);
    if (canonical_error)
        resolved = request.repo;
    const fs::path repo_dir = cache / "git" / util::sha256_hex(resolved.string()).substr(0, 16);
    std::error_code ec;
    fs::create_directories(repo_dir, ec);
    fs::create_directories(cache / "git" / "logs", ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + repo_dir.string() + ": " + ec.message());
    auto lock = RIG_TRY(util::FileLock::acquire(repo_dir / "lock", waiting));
    Repository repository{repo_dir, std::move(lock)};
    RIG_TRY(util::write_file_atomically(repo_dir / "repo", request.repo.string() + "\n"));
    return repository;
}

Builder start_builder(const BuildSettings& settings, const GitRequest& request,
                      const Resolved& resolved) {
    Builder builder(settings, settings.cache / "git" / "logs" /
                                  (utc_stamp() + "-" + resolved.commit.substr(0, 12) + "-" +
                                   resolved.config_hash + ".log"));
    builder.log("rig: building " + resolved.commit + " of " + request.repo.string() +
                "\nrig: fragments " + util::join(request.fragments, ", ") + ", config hash " +
                resolved.config_hash + ", compiler " + resolved.compiler + "\nrig: requested\n" +
                resolved.config.text);
    return builder;
}

// rig's own clone (cache/git/<repo>/src) at the commit, with the patches applied. It
// borrows the user's objects (--shared), so it costs little and sees every commit of the
// repository, and `git am` never writes into the user's tree. Returns the clone, or a
// patch that does not apply as the text of a config error.
Expected<std::variant<fs::path, std::string>> check_out(const GitRequest& request,
                                                        const std::string& commit,
                                                        const fs::path& repo_dir,
                                                        Builder& builder) {
    const fs::path src = repo_dir / "src";
    std::error_code ec;
    if (!fs::exists(src / ".git")) {
        builder.report("cloning");
        fs::path partial = repo_dir / "src.partial";
        fs::remove_all(partial, ec);
        RIG_TRY(builder.run_checked({"git", "clone", "--quiet", "--shared", "--no-checkout",
                                     request.repo.string(), partial.string()},
                                    repo_dir));
        fs::rename(partial, src, ec);
        if (ec)
            return fail(ErrorKind::infra,
                        "cannot rename " + partial.string() + ": " + ec.message());
    }
    builder.report("checkout");
    if (fs::exists(src / ".git" / "rebase-apply"))
        RIG_TRY(builder.run({"git", "am", "--abort"}, src));
    if (RIG_TRY(builder.run({"git", "cat-file", "-e", commit + "^{commit}"}, src)).exit_code != 0)
        RIG_TRY(builder.run_checked(
            {"git", "fetch", "--quiet", "--no-tags", request.repo.string(), commit}, src));
    // Only files that differ are rewritten, so make's timestamps see just the change.
    RIG_TRY(builder.run_checked({"git", "-c", "advice.detachedHead=false", "checkout", "--quiet",
                                 "--force", "--detach", commit},
                                src));
    RIG_TRY(builder.run_checked({"git", "clean", "-fdxq"}, src));

    for (const fs::path& patch : request.patches) {
        builder.report("applying " + patch.filename().string());
        auto applied =
            RIG_TRY(builder.run({"git", "-c", "user.name=rig", "-c", "user.email=rig@localhost",
                                 "am", "--quiet", patch.string()},
                                src));
        if (applied.exit_code != 0) {
            RIG_TRY(builder.run({"git", "am", "--abort"}, src));
            return std::string("patch " + patch.string() + " does not apply to " +
                               commit.substr(0, 12) + ": " + tail(applied.out + applied.err, 1500));
        }
    }
    return src;
}

// The newest build folder of the repository that holds a finished build, if any.
std::optional<fs::path> newest_finished_build(const fs::path& repo_dir) {
    std::optional<fs::path> newest;
    fs::file_time_type newest_time;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(repo_dir, ec)) {
        std::string name = entry.path().filename().string();
        if (!util::starts_with(name, "build-") || name.ends_with(".partial"))
            continue;
        auto time = fs::last_write_time(entry.path() / "vmlinux", ec);
        if (ec)
            continue;
        if (!newest || time > newest_time) {
            newest = entry.path();
            newest_time = time;
        }
    }
    return newest;
}

// Make's records in a copied build folder (.cmd and .d files) that name the folder it was
// copied from, rewritten to name `to`. Kbuild's own records are relative, but objtool's
// (tools/objtool) hold absolute paths: left alone, objtool would see a new command line,
// rebuild, and its new mtime would make Kbuild recompile every object.
Expected<void> move_recorded_paths(const fs::path& folder, const std::string& from,
                                   const std::string& to) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path& path = it->path();
        std::string name = path.filename().string();
        if (!it->is_regular_file(ec) || !(name.ends_with(".cmd") || name.ends_with(".d")))
            continue;
        std::string text = util::read_file(path);
        if (text.find(from) == std::string::npos)
            continue;
        auto times = fs::last_write_time(path, ec);
        RIG_TRY(
            util::write_file_atomically(path, util::replace_all(text, from, to), util::Sync::skip));
        fs::last_write_time(path, times, ec);
    }
    if (ec)
        return fail(ErrorKind::infra, "cannot read " + folder.string() + ": " + ec.message());
    return {};
}

// A config's first build starts from a copy of the newest finished build folder of the
// same repository. Kbuild records each object's options and command line, so it rebuilds
// exactly what the changed options reach: a config that differs in a few options builds
// in seconds instead of a cold build's ten minutes, with the same result.
Expected<void> seed_build_folder(const fs::path& repo_dir, const fs::path& out, Builder& builder) {
    std::error_code ec;
    if (fs::exists(out, ec))
        return {};
    auto seed = newest_finished_build(repo_dir);
    if (!seed)
        return {};
    builder.report("seeding the build folder from " + seed->filename().string());
    fs::path partial = out.string() + ".partial";
    fs::remove_all(partial, ec);
    RIG_TRY(builder.run_checked(
        {"cp", "-a", "--reflink=auto", "--", seed->string(), partial.string()}, repo_dir));
    RIG_TRY(move_recorded_paths(partial, seed->string(), out.string()));
    fs::rename(partial, out, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot rename " + partial.string() + ": " + ec.message());
    builder.log("rig: build folder seeded from " + seed->string());
    return {};
}

// tinyconfig, the fragments and options merged in, olddefconfig. Returns the options that
// did not survive olddefconfig (empty when all did) and the resolved values.
Expected<std::pair<std::vector<std::string>, ConfigValues>> configure(const fs::path& src,
                                                                      const fs::path& out,
                                                                      const RequestedConfig& config,
                                                                      Builder& builder) {
    builder.report("configuring");
    std::error_code ec;
    fs::create_directories(out, ec);
    touch(out);
    const fs::path dot_config = out / ".config";
    std::string previous = fs::exists(dot_config) ? util::read_file(dot_config) : std::string();
    auto previous_time = fs::last_write_time(dot_config, ec);
    auto make = [&](const std::string& target) {
        return builder.run_checked({"make", "-C", src.string(), "O=" + out.string(), target}, src);
    };
    RIG_TRY(make("tinyconfig"));
    RIG_TRY(
        util::write_file_atomically(dot_config, merge(util::read_file(dot_config), config.values)));
    RIG_TRY(make("olddefconfig"));
    std::string final_config = util::read_file(dot_config);
    // An unchanged .config keeps its old time: make then has nothing to re-sync.
    if (!previous.empty() && final_config == previous)
        fs::last_write_time(dot_config, previous_time, ec);
    ConfigValues actual = parse_config(final_config);
    return std::pair{unmet(config.values, actual), std::move(actual)};
}

} // namespace

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

namespace {

// make's command line and environment for the kernel (and its modules): all cores unless
// told, ccache when there is one, and the build identity that keeps images reproducible.
std::pair<std::vector<std::string>, std::map<std::string, std::string>>
make_command(const std::vector<std::string>& make_base, bool modules,
             const BuildSettings& settings) {
    std::vector<std::string> argv = make_base;
    argv.push_back("-j" + std::to_string(settings.jobs > 0 ? settings.jobs : default_jobs()));
    std::map<std::string, std::string> env;
    if (proc::find_program("ccache")) {
        argv.push_back("CC=ccache gcc");
        // Inside rig's cache: builds of every repository share it, and nothing outside
        // rig's cache is written.
        env["CCACHE_DIR"] = (settings.cache / "git" / "ccache").string();
    }
    argv.insert(argv.end(), k_build_identity.begin(), k_build_identity.end());
    argv.push_back("bzImage");
    if (modules)
        argv.push_back("modules");
    return {argv, env};
}

// The built kernel (and its modules) copied out of the build folder into the cache.
Expected<Artifact> collect_artifact(const fs::path& src, const fs::path& out, bool modules,
                                    const std::vector<std::string>& make_base,
                                    const fs::path& cache, const fs::path& index,
                                    Builder& builder) {
    fs::path staging = RIG_TRY(make_staging(cache));
    std::error_code ec;
    Artifact artifact;
    artifact.release =
        std::string(util::trim(util::read_file(out / "include/config/kernel.release")));
    fs::copy_file(out / "arch/x86/boot/bzImage", staging / "vmlinuz", ec);
    if (!ec)
        fs::copy_file(out / "vmlinux", staging / "vmlinux", ec);
    if (ec)
        return fail(ErrorKind::infra,
                    "cannot copy the kernel from " + out.string() + ": " + ec.message());
    if (modules) {
        std::vector<std::string> install = make_base;
        install.insert(install.end(), {"INSTALL_MOD_PATH=" + staging.string(), "modules_install"});
        RIG_TRY(builder.run_checked(install, src));
        // Links back into the build folders; a guest needs neither.
        fs::remove(staging / "lib/modules" / artifact.release / "build", ec);
        fs::remove(staging / "lib/modules" / artifact.release / "source", ec);
    }
    return adopt_staged(staging, artifact, cache, index);
}

// Runs make in the build folder with its output in the build log. Returns the first compiler
// errors when make failed. A cold build's object count and time are kept for the next
// one's progress line.
Expected<std::optional<std::string>>
run_make(Builder& builder, const std::vector<std::string>& make_base, bool modules,
         const fs::path& out, const BuildSettings& settings, const std::string& config_hash) {
    auto [argv, env] = make_command(make_base, modules, settings);
    const fs::path make_log = builder.log_path().string() + ".make";
    // A folder without vmlinux builds everything: a build of the same config that did so
    // before says how many objects and how long.
    const bool cold = !fs::exists(out / "vmlinux");
    if (cold)
        if (auto stats = load_cold_build_stats(settings.cache, config_hash))
            builder.expect(*stats);
    const double make_started = builder.elapsed();
    int status = RIG_TRY(builder.make(argv, make_log, env));
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

} // namespace

Expected<BuildResult> build_git(const GitRequest& request, const BuildSettings& settings) {
    auto started = Clock::now();
    auto report = [&](const std::string& phase) {
        if (settings.progress)
            settings.progress(
                {phase, 0, std::chrono::duration<double>(Clock::now() - started).count()});
    };
    report("resolving " + request.ref);
    BuildResult result;
    result.repo = request.repo.string();
    Resolved resolved = RIG_TRY(resolve(request));
    result.commit = resolved.commit;
    result.config_hash = resolved.config_hash;
    result.compiler = resolved.compiler;
    result.cache_key = resolved.cache_key;
    const fs::path index = settings.cache / "kernels" / "git" / result.cache_key;
    if (auto artifact = load_index(index, settings.cache)) {
        touch(index);
        result.cache_hit = true;
        result.artifact = std::move(*artifact);
        return result;
    }

    Repository repository = RIG_TRY(open_repository(
        request, settings.cache, [&] { report("waiting for another build of this repository"); }));
    const fs::path& repo_dir = repository.dir;
    // Another rig may have built it while this one waited.
    if (auto artifact = load_index(index, settings.cache)) {
        result.cache_hit = true;
        result.artifact = std::move(*artifact);
        return result;
    }

    Builder builder = start_builder(settings, request, resolved);
    result.log = builder.log_path();
    auto finish = [&](core::BuildOutcome outcome, std::string error_lines) {
        result.outcome = outcome;
        result.error_lines = std::move(error_lines);
        result.seconds = builder.elapsed();
        builder.log("rig: " + std::string(to_string(outcome)) + " after " +
                    std::to_string(result.seconds) + " s" +
                    (result.error_lines.empty() ? "" : "\n" + result.error_lines));
        return result;
    };

    auto checked_out = RIG_TRY(check_out(request, result.commit, repo_dir, builder));
    if (auto* problem = std::get_if<std::string>(&checked_out))
        return finish(core::BuildOutcome::config_error, *problem);
    const fs::path src = std::get<fs::path>(checked_out);

    const fs::path out = repo_dir / ("build-" + result.config_hash);
    RIG_TRY(seed_build_folder(repo_dir, out, builder));
    auto [problems, actual] = RIG_TRY(configure(src, out, resolved.config, builder));
    if (!problems.empty())
        return finish(core::BuildOutcome::config_error, util::join(problems, "\n"));

    bool modules = uses_modules(actual);
    builder.report(modules ? "building (with modules)" : "building");
    std::vector<std::string> make_base{"make", "-C", src.string(), "O=" + out.string()};
    if (auto errors =
            RIG_TRY(run_make(builder, make_base, modules, out, settings, result.config_hash)))
        return finish(core::BuildOutcome::build_failed, *errors);

    builder.report("collecting");
    result.artifact =
        RIG_TRY(collect_artifact(src, out, modules, make_base, settings.cache, index, builder));
    return finish(core::BuildOutcome::ok, "");
}

Expected<ExternalBuild> build_external_module(const GitRequest& request,
                                              const BuildSettings& settings,
                                              const fs::path& module_dir) {
    ExternalBuild result;
    Resolved resolved = RIG_TRY(resolve(request));
    Repository repository = RIG_TRY(open_repository(request, settings.cache, [&] {
        if (settings.progress)
            settings.progress({"waiting for another build of this repository", 0, 0});
    }));
    Builder builder = start_builder(settings, request, resolved);
    builder.log("rig: an out-of-tree module in " + module_dir.string());
    auto checked_out = RIG_TRY(check_out(request, resolved.commit, repository.dir, builder));
    if (auto* problem = std::get_if<std::string>(&checked_out)) {
        result.outcome = core::BuildOutcome::config_error;
        result.error_lines = *problem;
        return result;
    }
    const fs::path src = std::get<fs::path>(checked_out);
    // The folder the artifact was built in: another commit or patch set of this config may
    // have been built there since, so the tree is configured and prepared again for this
    // one (incremental: seconds when nothing changed).
    const fs::path out = repository.dir / ("build-" + resolved.config_hash);
    auto [problems, actual] = RIG_TRY(configure(src, out, resolved.config, builder));
    if (!problems.empty()) {
        result.outcome = core::BuildOutcome::config_error;
        result.error_lines = util::join(problems, "\n");
        return result;
    }
    if (actual.count("CONFIG_MODULES") == 0 || actual.at("CONFIG_MODULES") != "y") {
        result.outcome = core::BuildOutcome::config_error;
        result.error_lines = "CONFIG_MODULES is not set in this kernel's .config";
        return result;
    }
    // The compiler and identity the kernel was built with: kbuild rebuilds what a changed
    // command line reaches, and a module's vermagic must be the kernel's.
    std::vector<std::string> extra;
    if (proc::find_program("ccache"))
        extra.push_back("CC=ccache gcc");
    extra.insert(extra.end(), k_build_identity.begin(), k_build_identity.end());
    std::vector<std::string> prepare{
        "make", "-C", src.string(), "O=" + out.string(),
        "-j" + std::to_string(settings.jobs > 0 ? settings.jobs : default_jobs())};
    prepare.insert(prepare.end(), extra.begin(), extra.end());
    prepare.push_back("modules_prepare");
    auto prepared = RIG_TRY(builder.run(prepare, src));
    if (prepared.exit_code != 0) {
        result.outcome = core::BuildOutcome::build_failed;
        result.error_lines = first_errors(prepared.out + "\n" + prepared.err);
        return result;
    }
    auto built = RIG_TRY(builder.run(module_make_argv(src, out, module_dir, extra), module_dir));
    if (built.exit_code != 0) {
        result.outcome = core::BuildOutcome::build_failed;
        result.error_lines = first_errors(built.out + "\n" + built.err);
    }
    return result;
}

Expected<ConfigResult> configure_git(const GitRequest& request, const BuildSettings& settings) {
    ConfigResult result;
    Resolved resolved = RIG_TRY(resolve(request));
    result.commit = resolved.commit;
    result.config_hash = resolved.config_hash;
    Repository repository = RIG_TRY(open_repository(request, settings.cache, [&] {
        if (settings.progress)
            settings.progress({"waiting for another build of this repository", 0, 0});
    }));
    const fs::path& repo_dir = repository.dir;
    Builder builder = start_builder(settings, request, resolved);
    result.log = builder.log_path();
    auto checked_out = RIG_TRY(check_out(request, result.commit, repo_dir, builder));
    if (auto* problem = std::get_if<std::string>(&checked_out)) {
        result.outcome = core::BuildOutcome::config_error;
        result.error_lines = *problem;
        return result;
    }
    // Not a build folder: one without objects would keep the config's first build from
    // being seeded by a finished one.
    const fs::path out = repo_dir / ("config-" + result.config_hash);
    auto [problems, actual] =
        RIG_TRY(configure(std::get<fs::path>(checked_out), out, resolved.config, builder));
    result.outcome = problems.empty() ? core::BuildOutcome::ok : core::BuildOutcome::config_error;
    result.error_lines = util::join(problems, "\n");
    result.requested = resolved.config.values.size();
    result.config = out / ".config";
    builder.log("rig: " + std::string(to_string(result.outcome)) +
                (result.error_lines.empty() ? "" : "\n" + result.error_lines));
    return result;
}

namespace {

// Build folders, per repository, under that repository's lock (skipped when busy): the
// stale ones, and every one (with the clone) of a repository that is gone.
template <typename Stale>
void collect_build_dirs(const fs::path& cache, Stale stale, GcResult& gc) {
    std::error_code ec;
    if (!fs::is_directory(cache / "git"))
        return;
    for (const auto& repo : fs::directory_iterator(cache / "git", ec)) {
        if (!fs::exists(repo.path() / "lock"))
            continue;
        auto lock = util::FileLock::try_acquire(repo.path() / "lock");
        if (!lock || !*lock)
            continue;
        fs::path origin(util::trim(util::read_file(repo.path() / "repo")));
        bool gone = origin.empty() || !fs::exists(origin);
        for (const auto& entry : fs::directory_iterator(repo.path(), ec)) {
            std::string name = entry.path().filename().string();
            bool folder = util::starts_with(name, "build-") || util::starts_with(name, "config-");
            if (folder && (gone || stale(entry.path()))) {
                gc.bytes_freed += tree_size(entry.path());
                fs::remove_all(entry.path(), ec);
                ++gc.build_dirs_removed;
            } else if (gone && (name == "src" || name == "src.partial")) {
                gc.bytes_freed += tree_size(entry.path());
                fs::remove_all(entry.path(), ec);
            }
        }
    }
}

} // namespace

Expected<GcResult> collect_garbage(const fs::path& cache, std::chrono::hours unused_for,
                                   const Forget& forget) {
    GcResult gc;
    const auto cutoff = fs::file_time_type::clock::now() - unused_for;
    std::error_code ec;
    auto stale = [&](const fs::path& path) {
        std::error_code time_ec;
        auto time = fs::last_write_time(path, time_ec);
        return unused_for.count() == 0 || (!time_ec && time < cutoff);
    };

    // Artifacts: an index names a content-addressed folder, which a Debian or image
    // kernel (or another build) may share; a folder goes only when nothing names it.
    std::map<std::string, int> references;
    std::vector<fs::path> removed_indexes;
    for (const fs::path& folder : {cache / "kernels" / "git", cache / "kernels" / "debian"}) {
        if (!fs::is_directory(folder))
            continue;
        for (const auto& entry : fs::directory_iterator(folder, ec)) {
            std::string id(util::trim(util::read_file(entry.path())));
            if (folder.filename() == "git" && stale(entry.path())) {
                removed_indexes.push_back(entry.path());
                continue;
            }
            ++references[id];
        }
    }
    for (const fs::path& index : removed_indexes) {
        std::string id(util::trim(util::read_file(index)));
        fs::remove(index, ec);
        RIG_TRY(forget(index.filename().string()));
        ++gc.artifacts_removed;
        fs::path dir = cache / "kernels" / id;
        if (id.empty() || references[id] > 0 || !fs::is_directory(dir))
            continue;
        gc.bytes_freed += tree_size(dir);
        fs::remove_all(dir, ec);
        references[id] = 1; // a second index naming it is then a no-op
    }

    collect_build_dirs(cache, stale, gc);
    // Built modules and Debian headers (kernel/module.hpp), touched on every use.
    for (const fs::path& folder : {cache / "modules", cache / "headers"})
        if (fs::is_directory(folder))
            for (const auto& entry : fs::directory_iterator(folder, ec))
                if (stale(entry.path())) {
                    gc.bytes_freed += tree_size(entry.path());
                    fs::remove_all(entry.path(), ec);
                }
    if (fs::is_directory(cache / "git" / "logs"))
        for (const auto& entry : fs::directory_iterator(cache / "git" / "logs", ec))
            if (stale(entry.path())) {
                gc.bytes_freed += tree_size(entry.path());
                fs::remove(entry.path(), ec);
            }
    // Staging left by a killed rig; an hour is far longer than any staging lasts.
    if (fs::is_directory(cache / "tmp"))
        for (const auto& entry : fs::directory_iterator(cache / "tmp", ec))
            if (fs::last_write_time(entry.path(), ec) <
                fs::file_time_type::clock::now() - std::chrono::hours(1)) {
                gc.bytes_freed += tree_size(entry.path());
                fs::remove_all(entry.path(), ec);
            }
    return gc;
}

} // namespace rig::kernel
