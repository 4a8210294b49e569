// SPDX-License-Identifier: MIT
// Git kernel builds against a stand-in kernel tree (tests/data/kernel/fake-tree) in a real
// git repository: cache keys and hits, patches, config checks, failures, the store, gc.
#include "full_records.hpp"
#include "kernel/build.hpp"
#include "proc/process.hpp"
#include "run/kernel_records.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"
#include "util/clock.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rig::kernel {
namespace {

using core::BuildOutcome;
using rig::test::TempDir;
namespace fs = std::filesystem;

std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
}

std::string git(const fs::path& repo, std::vector<std::string> args) {
    std::vector<std::string> argv{"git",         "-C", repo.string(),   "-c",
                                  "user.name=t", "-c", "user.email=t@t"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = proc::run(argv);
    EXPECT_TRUE(result && result->exit_code == 0)
        << (result ? result->err : result.error().message);
    return result ? result->out : "";
}

class KernelBuild : public ::testing::Test {
protected:
    void SetUp() override {
        m_repo = m_dir.path() / "linux";
        m_cache = m_dir.path() / "cache";
        fs::path fake = fs::path(std::getenv("RIG_TEST_DATA")) / "kernel" / "fake-tree";
        fs::create_directories(m_repo);
        fs::copy(fake, m_repo, fs::copy_options::recursive);
        git(m_repo, {"init", "-q", "-b", "main"});
        git(m_repo, {"add", "-A"});
        git(m_repo, {"commit", "-q", "-m", "base"});
        git(m_repo, {"tag", "v1"});
        auto db = store::Database::open(m_dir.path() / "rig.db");
        ASSERT_TRUE(db) << db.error().message;
        m_db = std::move(*db);
    }

    GitRequest request(const std::string& ref = "v1") const {
        GitRequest request;
        request.repo = m_repo;
        request.ref = ref;
        request.fragments = {"base", "release"};
        return request;
    }

    BuildSettings settings() {
        BuildSettings settings;
        settings.cache = m_cache;
        settings.jobs = 1;
        settings.progress = [this](const BuildProgress& progress) {
            m_phases.push_back(progress.phase);
            m_objects = std::max(m_objects, progress.objects);
            m_expected_objects = std::max(m_expected_objects, progress.expected_objects);
        };
        return settings;
    }

    BuildResult build(const GitRequest& request) {
        auto result = build_git(request, settings());
        EXPECT_TRUE(result) << result.error().message;
        if (!result)
            return {};
        auto recorded = run::record_build(*m_db, *result, "fake");
        EXPECT_TRUE(recorded) << recorded.error().message;
        return *result;
    }

    // How many times make built bzImage in the build folder of `result`'s config.
    size_t make_runs(const BuildResult& result) const {
        for (const auto& repo : fs::directory_iterator(m_cache / "git"))
            if (fs::exists(repo.path() / ("build-" + result.config_hash) / "builds"))
                return util_count(read(repo.path() / ("build-" + result.config_hash) / "builds"));
        return 0;
    }
    static size_t util_count(const std::string& text) {
        return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    }

    std::string commit_change(const std::string& text, const std::string& message) {
        write(m_repo / "main.c", text);
        git(m_repo, {"commit", "-q", "-am", message});
        std::string sha = git(m_repo, {"rev-parse", "HEAD"});
        return sha.substr(0, sha.find('\n'));
    }

    TempDir m_dir;
    fs::path m_repo;
    fs::path m_cache;
    std::unique_ptr<store::Database> m_db;
    std::vector<std::string> m_phases;
    size_t m_objects = 0;
    size_t m_expected_objects = 0;
};

TEST_F(KernelBuild, BuildsThenASecondRequestIsACacheHitWithNoMakeRun) {
    const std::string before = util::utc_text(std::chrono::system_clock::now());
    BuildResult first = build(request());
    ASSERT_EQ(first.outcome, BuildOutcome::ok) << first.error_lines;
    // The record says when the build started, not when it was stored.
    const auto built_for = std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::duration<double>(first.seconds));
    const std::string latest_start = util::utc_text(std::chrono::system_clock::now() - built_for);
    auto recorded = m_db->kernel_builds().value();
    ASSERT_EQ(recorded.size(), 1u);
    EXPECT_GE(recorded[0].started_at, before);
    EXPECT_LE(recorded[0].started_at, latest_start) << "a build of " << first.seconds << " s";
    EXPECT_FALSE(first.cache_hit);
    ASSERT_TRUE(first.artifact);
    EXPECT_EQ(first.artifact->release, "6.1.0-fake");
    EXPECT_TRUE(fs::exists(first.artifact->image));
    // base boots through PVH: make built the vmlinux alone, which is the image.
    EXPECT_EQ(first.artifact->image.filename(), "vmlinux");
    EXPECT_FALSE(fs::exists(first.artifact->image.parent_path() / "vmlinuz"));
    // Its .config travels with it, for a report made long after.
    EXPECT_NE(read(first.artifact->image.parent_path() / "config").find("CONFIG_PRINTK=y"),
              std::string::npos);
    EXPECT_TRUE(first.artifact->modules_dir.empty());
    EXPECT_EQ(first.commit.size(), 40u);
    EXPECT_EQ(make_runs(first), 1u);
    EXPECT_EQ(m_objects, 3u) << "CC, CC and LD lines";
    EXPECT_NE(std::find(m_phases.begin(), m_phases.end(), "configuring"), m_phases.end());
    EXPECT_NE(read(first.log).find("rig: ok after"), std::string::npos);

    BuildResult second = build(request());
    EXPECT_TRUE(second.cache_hit);
    EXPECT_EQ(second.outcome, BuildOutcome::ok);
    EXPECT_EQ(second.cache_key, first.cache_key);
    EXPECT_EQ(second.seconds, 0);
    ASSERT_TRUE(second.artifact);
    EXPECT_EQ(second.artifact->id, first.artifact->id);
    EXPECT_EQ(make_runs(first), 1u) << "a cache hit must not run make";

    auto builds = m_db->kernel_builds();
    ASSERT_TRUE(builds);
    ASSERT_EQ(builds->size(), 1u) << "a cache hit is not a build";
    EXPECT_EQ((*builds)[0].outcome, BuildOutcome::ok);
    EXPECT_EQ((*builds)[0].commit, first.commit);
    EXPECT_EQ((*builds)[0].config_hash, first.config_hash);
    EXPECT_FALSE((*builds)[0].compiler.empty());
    EXPECT_TRUE((*builds)[0].artifact_id);
    auto artifact = m_db->find_kernel_artifact(first.cache_key);
    ASSERT_TRUE(artifact && *artifact);
    EXPECT_EQ((**artifact).commit, first.commit);
    EXPECT_EQ((**artifact).source, core::KernelSource::git);
}

// A tree's Makefiles are code rig did not write: make runs without a network always, and
// when rig is root as another user that cannot change the source, while what the build
// leaves in rig's cache is rig's own.
TEST_F(KernelBuild, MakeRunsConfinedAsTheBuildUserWithoutNetworkOrWritableSource) {
    auto result = build(request());
    ASSERT_EQ(result.outcome, BuildOutcome::ok) << result.error_lines;
    fs::path out = m_cache / "git";
    for (const auto& repo : fs::directory_iterator(m_cache / "git"))
        if (fs::exists(repo.path() / ("build-" + result.config_hash)))
            out = repo.path() / ("build-" + result.config_hash);
    EXPECT_EQ(read(out / "network-devices"), "1\n");
    EXPECT_EQ(read(out / "built-by"), std::to_string(::geteuid()) + "\n");
    if (::geteuid() != 0)
        return;

    BuildSettings confined = settings();
    confined.make_user = proc::Credentials{65534, 65534, {}};
    // A folder only root may enter above the cache, as /root is: the binds reach past it.
    fs::permissions(m_dir.path(), fs::perms(0700));
    std::string next = commit_change("int main(void) { return 1; }\n", "next");
    auto built = build_git(request(next), confined);
    ASSERT_TRUE(built) << built.error().message;
    ASSERT_EQ(built->outcome, BuildOutcome::ok) << built->error_lines;
    EXPECT_EQ(read(out / "built-by"), "65534\n");
    EXPECT_EQ(read(out / "network-devices"), "1\n");
    EXPECT_EQ(read(out / "source-writable"), "no\n");
    struct stat kernel {};
    ASSERT_EQ(::stat(built->artifact->image.c_str(), &kernel), 0);
    EXPECT_EQ(kernel.st_uid, ::geteuid());
}

TEST_F(KernelBuild, NextCommitReusesTheBuildFolderAndNeverTouchesTheUsersTree) {
    BuildResult first = build(request());
    std::string sha = commit_change("int main(void) { return 1; }\n", "change");
    BuildResult second = build(request(sha));
    ASSERT_EQ(second.outcome, BuildOutcome::ok);
    EXPECT_FALSE(second.cache_hit);
    EXPECT_EQ(second.commit, sha);
    EXPECT_EQ(second.config_hash, first.config_hash);
    EXPECT_NE(second.cache_key, first.cache_key);
    EXPECT_EQ(make_runs(first), 2u) << "same config, same build folder";
    // The user's checkout stays where it was, without build output.
    EXPECT_EQ(git(m_repo, {"status", "--porcelain"}), "");
    EXPECT_FALSE(fs::exists(m_repo / ".config"));
}

// The configure (tinyconfig, olddefconfig) is half of an incremental build: it runs again
// only when what it reads changed, a Kconfig file of the tree or the folder's .config.
TEST_F(KernelBuild, ConfigureRunsAgainOnlyWhenAKconfigFileOrTheConfigChanged) {
    BuildResult first = build(request());
    auto configures = [&] {
        for (const auto& repo : fs::directory_iterator(m_cache / "git"))
            if (fs::exists(repo.path() / ("build-" + first.config_hash) / "configures"))
                return util_count(
                    read(repo.path() / ("build-" + first.config_hash) / "configures"));
        return size_t(0);
    };
    EXPECT_EQ(configures(), 1u);
    BuildResult code = build(request(commit_change("int main(void) { return 1; }\n", "code")));
    ASSERT_EQ(code.outcome, BuildOutcome::ok);
    EXPECT_EQ(make_runs(first), 2u);
    EXPECT_EQ(configures(), 1u) << "a commit that touches no Kconfig file was configured again";

    write(m_repo / "Kconfig.fake", "config FAKE\n\tbool\n");
    git(m_repo, {"add", "Kconfig.fake"});
    git(m_repo, {"commit", "-q", "-m", "kconfig"});
    std::string sha = git(m_repo, {"rev-parse", "HEAD"});
    BuildResult kconfig = build(request(sha.substr(0, sha.find('\n'))));
    ASSERT_EQ(kconfig.outcome, BuildOutcome::ok);
    EXPECT_EQ(configures(), 2u) << "a new Kconfig file must be configured";

    // A .config changed behind rig's back (the tree's own make could) is not trusted.
    for (const auto& repo : fs::directory_iterator(m_cache / "git"))
        if (fs::exists(repo.path() / ("build-" + first.config_hash)))
            std::ofstream(repo.path() / ("build-" + first.config_hash) / ".config", std::ios::app)
                << "CONFIG_FORGED=y\n";
    BuildResult forged = build(request(commit_change("int main(void) { return 2; }\n", "more")));
    ASSERT_EQ(forged.outcome, BuildOutcome::ok);
    EXPECT_EQ(configures(), 3u);
}

// tinyconfig is most of a configure and reads only the tree's Kconfig inputs and the
// toolchain: a tree's second config, and each step of a config bisect, take its .config
// from the cache.
TEST_F(KernelBuild, TinyconfigRunsOncePerTreeAndToolchain) {
    BuildResult release = build(request());
    auto tinyconfigs = [&](const BuildResult& result) {
        for (const auto& repo : fs::directory_iterator(m_cache / "git"))
            if (fs::exists(repo.path() / ("build-" + result.config_hash)))
                return util_count(
                    read(repo.path() / ("build-" + result.config_hash) / "tinyconfigs"));
        return size_t(0);
    };
    EXPECT_EQ(tinyconfigs(release), 1u);
    GitRequest debug = request();
    debug.fragments = {"base", "debug"};
    BuildResult built = build(debug);
    ASSERT_EQ(built.outcome, BuildOutcome::ok);
    // Seeded from the release folder, whose record of its one tinyconfig came along.
    EXPECT_EQ(tinyconfigs(built), 1u) << "the second config ran tinyconfig again";
    EXPECT_NE(read(built.log).find("tinyconfig's .config for these Kconfig files"),
              std::string::npos);

    // A Kconfig file changed: tinyconfig may now differ, and runs again.
    write(m_repo / "Kconfig.fake", "config FAKE\n\tbool\n");
    git(m_repo, {"add", "Kconfig.fake"});
    git(m_repo, {"commit", "-q", "-m", "kconfig"});
    std::string sha = git(m_repo, {"rev-parse", "HEAD"});
    GitRequest changed = debug;
    changed.ref = sha.substr(0, sha.find('\n'));
    ASSERT_EQ(build(changed).outcome, BuildOutcome::ok);
    EXPECT_EQ(tinyconfigs(built), 2u);
}

TEST_F(KernelBuild, OtherFragmentsGetAnotherBuildFolderAndKey) {
    BuildResult release = build(request());
    GitRequest debug = request();
    debug.fragments = {"base", "debug"};
    BuildResult built = build(debug);
    ASSERT_EQ(built.outcome, BuildOutcome::ok);
    EXPECT_NE(built.config_hash, release.config_hash);
    EXPECT_NE(built.cache_key, release.cache_key);
    EXPECT_EQ(make_runs(release), 1u);
    // The new config's folder started as a copy of the finished release folder (its record
    // of one make run came along), then make ran once more in it.
    EXPECT_EQ(make_runs(built), 2u);
    EXPECT_NE(std::find(m_phases.begin(), m_phases.end(),
                        "seeding the build folder from build-" + release.config_hash),
              m_phases.end());
    // The release folder itself was left as it was.
    EXPECT_EQ(make_runs(release), 1u);
    // Make's records that named the release folder by its absolute path now name the copy.
    for (const auto& repo : fs::directory_iterator(m_cache / "git")) {
        fs::path folder = repo.path() / ("build-" + built.config_hash);
        if (!fs::exists(folder))
            continue;
        std::string record = read(folder / ".x.o.cmd");
        EXPECT_NE(record.find(folder.string() + "/tools/x.o"), std::string::npos) << record;
        EXPECT_EQ(record.find("build-" + release.config_hash), std::string::npos) << record;
    }
}

TEST_F(KernelBuild, AFirstBuildWithNoFinishedFolderIsNotSeeded) {
    GitRequest broken = request(commit_change("int main(void) { SYNTAX }\n", "broken"));
    EXPECT_EQ(build(broken).outcome, BuildOutcome::build_failed);
    // A failed build leaves no vmlinux: nothing to seed a new config from.
    GitRequest debug = broken;
    debug.fragments = {"base", "debug"};
    BuildResult built = build(debug);
    EXPECT_EQ(make_runs(built), 1u);
    for (const std::string& phase : m_phases)
        EXPECT_EQ(phase.find("seeding"), std::string::npos) << phase;
}

TEST_F(KernelBuild, AColdBuildOfAConfigBuiltColdBeforeKnowsItsObjectsAndTime) {
    BuildResult first = build(request());
    ASSERT_EQ(first.outcome, BuildOutcome::ok);
    EXPECT_EQ(m_expected_objects, 0u) << "nothing known of the first cold build";
    auto stats = load_cold_build_stats(m_cache, first.config_hash);
    ASSERT_TRUE(stats);
    EXPECT_EQ(stats->objects, 3u);
    EXPECT_GT(stats->seconds, 0);

    // The next commit builds incrementally: the folder has a vmlinux, make decides the work.
    build(request(commit_change("int main(void) { return 1; }\n", "one")));
    EXPECT_EQ(m_expected_objects, 0u) << "an incremental build has no known total";

    // After a gc, say, the folder is gone and the build is cold again.
    for (const auto& repo : fs::directory_iterator(m_cache / "git"))
        fs::remove_all(repo.path() / ("build-" + first.config_hash));
    build(request(commit_change("int main(void) { return 2; }\n", "two")));
    EXPECT_EQ(m_expected_objects, 3u);
}

TEST(KernelBuildText, ProgressSaysHowFarWhenTheTotalIsKnown) {
    EXPECT_EQ(progress_text({"configuring"}), "configuring");
    EXPECT_EQ(progress_text({"building", 12, 30}), "building, 12 objects");
    EXPECT_EQ(progress_text({"building", 500, 120, 2000, 600}),
              "building, 500/2000 objects, about 7m 30s left");
    EXPECT_EQ(progress_text({"building", 2100, 700, 2000, 600}),
              "building, 2100/2000 objects, nearly done")
        << "a build slower or larger than the last says so rather than a negative time";
}

// make reports every 2 s; a log gets a line per phase and then one every 15 s.
TEST(KernelBuildText, ALogGetsEachPhaseAndThenALineEveryFifteenSeconds) {
    ProgressPacer pacer = ProgressPacer::for_output(false);
    std::vector<double> shown;
    for (double t = 0; t <= 60; t += 2)
        if (pacer.due({t < 4 ? "configuring" : "building", static_cast<size_t>(t * 10), t}))
            shown.push_back(t);
    EXPECT_EQ(shown, (std::vector<double>{0, 4, 20, 36, 52}));
    ProgressPacer terminal = ProgressPacer::for_output(true);
    EXPECT_TRUE(terminal.due({"building", 1, 10}));
    EXPECT_FALSE(terminal.due({"building", 2, 10.5}));
    EXPECT_TRUE(terminal.due({"building", 3, 11}));
}

TEST_F(KernelBuild, ConfigureAloneResolvesAndChecksWithoutBuilding) {
    GitRequest asked = request();
    auto configured = configure_git(asked, settings());
    ASSERT_TRUE(configured) << configured.error().message;
    EXPECT_EQ(configured->outcome, BuildOutcome::ok) << configured->error_lines;
    EXPECT_NE(read(configured->config).find("CONFIG_PRINTK=y"), std::string::npos);
    EXPECT_EQ(configured->config.parent_path().filename().string(),
              "config-" + configured->config_hash);
    asked.options = {{"CONFIG_FAKE_UNKNOWN", "y"}};
    configured = configure_git(asked, settings());
    ASSERT_TRUE(configured) << configured.error().message;
    EXPECT_EQ(configured->outcome, BuildOutcome::config_error);
    EXPECT_NE(configured->error_lines.find("CONFIG_FAKE_UNKNOWN=y requested"), std::string::npos)
        << configured->error_lines;
    // Nothing was built or recorded, and no build folder was made to block seeding.
    auto builds = m_db->kernel_builds();
    ASSERT_TRUE(builds);
    EXPECT_TRUE(builds->empty());
    for (const auto& repo : fs::directory_iterator(m_cache / "git"))
        for (const auto& entry : fs::directory_iterator(repo.path()))
            EXPECT_NE(entry.path().filename().string().rfind("build-", 0), 0u) << entry.path();
}

TEST_F(KernelBuild, SyntaxErrorIsBuildFailedWithTheCompilerLine) {
    std::string sha = commit_change("int main(void) { SYNTAX }\n", "broken");
    BuildResult result = build(request(sha));
    EXPECT_EQ(result.outcome, BuildOutcome::build_failed);
    EXPECT_FALSE(result.artifact);
    EXPECT_EQ(result.error_lines, "main.c:3:1: error: expected declaration before }");
    auto builds = m_db->kernel_builds();
    ASSERT_TRUE(builds);
    ASSERT_EQ(builds->size(), 1u);
    EXPECT_EQ((*builds)[0].outcome, BuildOutcome::build_failed);
    EXPECT_EQ((*builds)[0].error_lines, result.error_lines);
    EXPECT_FALSE((*builds)[0].artifact_id);
    EXPECT_TRUE(fs::exists((*builds)[0].log_path));
}

TEST_F(KernelBuild, MissingOptionIsConfigErrorNamingIt) {
    GitRequest asked = request();
    asked.options = {{"CONFIG_FAKE_UNKNOWN", "y"}};
    BuildResult result = build(asked);
    EXPECT_EQ(result.outcome, BuildOutcome::config_error);
    EXPECT_NE(result.error_lines.find("CONFIG_FAKE_UNKNOWN=y requested"), std::string::npos)
        << result.error_lines;
    EXPECT_EQ(make_runs(result), 0u);
}

// A ref or repository that git would read as an option is refused before git runs, even
// when it did not come through a scenario (a stored run, a bisect).
TEST_F(KernelBuild, OptionLikeRefsAndRepositoriesAreRefused) {
    auto ref = resolve_commit(m_repo, "-ufoo");
    ASSERT_FALSE(ref);
    EXPECT_EQ(ref.error().kind, ErrorKind::config);
    EXPECT_EQ(ref.error().message, "git ref '-ufoo' starts with '-', which git would read as an "
                                   "option");
    auto repo = resolve_commit("--upload-pack=touch x", "v1");
    ASSERT_FALSE(repo);
    EXPECT_NE(
        repo.error().message.find("kernel repository '--upload-pack=touch x' starts with '-'"),
        std::string::npos)
        << repo.error().message;
    auto good = resolve_commit(m_repo, "v1");
    ASSERT_TRUE(good) << good.error().message;
    EXPECT_EQ(good->size(), 40u);
}

TEST_F(KernelBuild, ModuleOptionsInstallModules) {
    GitRequest asked = request();
    asked.options = {{"CONFIG_FAKE_FS", "m"}};
    BuildResult result = build(asked);
    ASSERT_EQ(result.outcome, BuildOutcome::ok) << result.error_lines;
    ASSERT_TRUE(result.artifact);
    EXPECT_TRUE(fs::exists(result.artifact->modules_dir / "modules.dep"));
    EXPECT_FALSE(fs::exists(result.artifact->modules_dir / "build"));
}

TEST_F(KernelBuild, PatchesApplyInRigsCloneAndArePartOfTheKey) {
    BuildResult plain = build(request());
    // A patch made in a scratch clone, applied by rig on top of v1.
    fs::path scratch = m_dir.path() / "scratch";
    git(m_dir.path(), {"clone", "-q", m_repo.string(), scratch.string()});
    write(scratch / "main.c", "int main(void) { return 2; }\n");
    git(scratch, {"commit", "-q", "-am", "9p: patched"});
    git(scratch, {"format-patch", "-q", "-1", "-o", (m_dir.path() / "patches").string()});
    fs::path patch = *fs::directory_iterator(m_dir.path() / "patches");
    GitRequest patched = request();
    patched.patches = {patch};
    BuildResult result = build(patched);
    ASSERT_EQ(result.outcome, BuildOutcome::ok) << result.error_lines;
    EXPECT_NE(result.cache_key, plain.cache_key);
    EXPECT_EQ(result.commit, plain.commit) << "the commit is the ref's; the patch adds to the key";
    EXPECT_NE(read(result.artifact->image).find("return 2"), std::string::npos);
    EXPECT_EQ(git(m_repo, {"log", "--format=%s"}), "base\n")
        << "the user's repository is untouched";
    // Again: a cache hit; and the unpatched kernel is still the unpatched one.
    EXPECT_TRUE(build(patched).cache_hit);
    EXPECT_EQ(read(build(request()).artifact->image).find("return 2"), std::string::npos);
}

TEST_F(KernelBuild, PatchThatDoesNotApplyIsConfigErrorNamingIt) {
    fs::path patch = m_dir.path() / "0001-bad.patch";
    write(patch, "From 1 Mon Sep 17 00:00:00 2001\nFrom: t <t@t>\nSubject: [PATCH] bad\n\n---\n"
                 "diff --git a/main.c b/main.c\n--- a/main.c\n+++ b/main.c\n@@ -1 +1 @@\n"
                 "-no such line\n+int x;\n");
    GitRequest asked = request();
    asked.patches = {patch};
    BuildResult result = build(asked);
    EXPECT_EQ(result.outcome, BuildOutcome::config_error);
    EXPECT_NE(result.error_lines.find("0001-bad.patch does not apply"), std::string::npos)
        << result.error_lines;
    // The clone is usable again afterwards.
    EXPECT_EQ(build(request()).outcome, BuildOutcome::ok);
}

// A child process that holds `file` open (made if missing) until it is killed, as a live
// git holds its index.lock. Returns once the file is open. Forked before anything of this
// test's opens it.
pid_t hold_open(const fs::path& file) {
    int ready[2];
    if (::pipe(ready) != 0)
        return -1;
    pid_t child = ::fork();
    if (child == 0) {
        int fd = ::open(file.c_str(), O_WRONLY | O_CREAT, 0644);
        char answer = fd >= 0 ? 'y' : 'n';
        if (::write(ready[1], &answer, 1) != 1 || fd < 0)
            ::_exit(1);
        for (;;)
            ::pause();
    }
    char answer = 'n';
    if (child < 0 || ::read(ready[0], &answer, 1) != 1 || answer != 'y')
        ADD_FAILURE() << "the child could not open " << file;
    ::close(ready[0]);
    ::close(ready[1]);
    return child;
}

TEST_F(KernelBuild, AStaleIndexLockIsRemovedButOneAProcessHoldsIsNot) {
    BuildResult first = build(request());
    ASSERT_EQ(first.outcome, BuildOutcome::ok) << first.error_lines;
    fs::path clone;
    for (const auto& repo : fs::directory_iterator(m_cache / "git"))
        if (fs::exists(repo.path() / "src" / ".git"))
            clone = repo.path() / "src";
    ASSERT_FALSE(clone.empty());
    const fs::path lock = clone / ".git" / "index.lock";

    // A git killed with rig left its lock: nobody holds it, so it goes and the build goes on.
    write(lock, "");
    std::string second_sha = commit_change("int main(void) { return 2; }\n", "second");
    BuildResult second = build(request(second_sha));
    EXPECT_EQ(second.outcome, BuildOutcome::ok) << second.error_lines;
    EXPECT_FALSE(fs::exists(lock));
    EXPECT_NE(read(second.log).find("rig: removed " + lock.string() + ", which no process holds"),
              std::string::npos);

    // A live process holds it open: it stays, and the error names that process.
    pid_t holder = hold_open(lock);
    ASSERT_GT(holder, 0);
    std::string third_sha = commit_change("int main(void) { return 3; }\n", "third");
    auto third = build_git(request(third_sha), settings());
    ::kill(holder, SIGKILL);
    ::waitpid(holder, nullptr, 0);
    ASSERT_FALSE(third) << "a held index.lock must stop the build";
    EXPECT_EQ(third.error().kind, ErrorKind::infra);
    EXPECT_NE(third.error().message.find(lock.string() + " is in use by process " +
                                         std::to_string(holder) + " ("),
              std::string::npos)
        << third.error().message;
    EXPECT_TRUE(fs::exists(lock));
}

TEST_F(KernelBuild, BadRequestsAreConfigErrors) {
    GitRequest no_repo = request();
    no_repo.repo = m_dir.path() / "nowhere";
    auto result = build_git(no_repo, settings());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, ErrorKind::config);
    EXPECT_NE(result.error().message.find("nowhere"), std::string::npos);

    result = build_git(request("v9.9"), settings());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, ErrorKind::config);
    EXPECT_NE(result.error().message.find("'v9.9'"), std::string::npos);

    GitRequest no_patch = request();
    no_patch.patches = {m_dir.path() / "missing.patch"};
    result = build_git(no_patch, settings());
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("missing.patch"), std::string::npos);

    GitRequest no_fragment = request();
    no_fragment.fragments = {"base", "nosuch"};
    result = build_git(no_fragment, settings());
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("'nosuch'"), std::string::npos);
}

TEST_F(KernelBuild, GcRemovesUnusedArtifactsAndBuildFolders) {
    BuildResult first = build(request());
    // A built module and Debian headers, as kernel/module.cpp keeps them.
    fs::create_directories(m_cache / "modules" / "0123456789abcdef");
    fs::create_directories(m_cache / "headers" / "6.1.0-57-amd64" / "usr");
    auto kept = run::collect_garbage(m_cache, *m_db, std::chrono::hours(24));
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->artifacts_removed, 0u);
    EXPECT_TRUE(fs::exists(m_cache / "modules" / "0123456789abcdef"));
    EXPECT_TRUE(fs::exists(m_cache / "headers" / "6.1.0-57-amd64"));
    EXPECT_TRUE(build(request()).cache_hit);

    auto removed = run::collect_garbage(m_cache, *m_db, std::chrono::hours(0));
    ASSERT_TRUE(removed);
    EXPECT_EQ(removed->artifacts_removed, 1u);
    EXPECT_EQ(removed->build_dirs_removed, 1u);
    EXPECT_GT(removed->bytes_freed, 0u);
    EXPECT_FALSE(fs::exists(first.artifact->image));
    EXPECT_FALSE(fs::exists(m_cache / "modules" / "0123456789abcdef"));
    EXPECT_FALSE(fs::exists(m_cache / "headers" / "6.1.0-57-amd64"));
    auto artifact = m_db->find_kernel_artifact(first.cache_key);
    ASSERT_TRUE(artifact);
    EXPECT_FALSE(*artifact);
    BuildResult again = build(request());
    EXPECT_FALSE(again.cache_hit);
    EXPECT_EQ(again.outcome, BuildOutcome::ok);
}

TEST(KernelBuildText, ObjectLinesAndFirstErrors) {
    EXPECT_TRUE(is_object_line("  CC      fs/9p/vfs_inode.o"));
    EXPECT_TRUE(is_object_line("  CC [M]  fs/9p/9p.o"));
    EXPECT_TRUE(is_object_line("  LD      vmlinux"));
    EXPECT_FALSE(is_object_line("  GEN     Makefile"));
    EXPECT_FALSE(is_object_line("CC fs/x.o"));
    EXPECT_FALSE(is_object_line("  CC"));
    std::string log = "  CC      a.o\n../fs/9p/v9fs.c: In function 'x':\n"
                      "../fs/9p/v9fs.c:12:1: error: expected ';' before '}' token\n"
                      "make[3]: *** [scripts/Makefile.build:250: fs/9p/v9fs.o] Error 1\n";
    EXPECT_EQ(first_errors(log), "../fs/9p/v9fs.c:12:1: error: expected ';' before '}' token");
    EXPECT_EQ(first_errors("make: *** No rule to make target 'bzImage'.  Stop.\n"),
              "make: *** No rule to make target 'bzImage'.  Stop.");
    EXPECT_EQ(first_errors("a\nb\n", 8), "a\nb\n");
}

TEST(KernelBuildText, RequestPathsAreRelativeToTheScenario) {
    core::Kernel kernel;
    kernel.repo = "../linux";
    kernel.ref = "v6.1";
    kernel.patches = {"patches/a.patch", "/abs/b.patch"};
    kernel.options = {{"CONFIG_X", "y"}};
    GitRequest request = git_request(kernel, {"base", "debug"}, "/s/scenarios");
    EXPECT_EQ(request.repo, fs::path("/s/linux"));
    EXPECT_EQ(request.patches[0], fs::path("/s/scenarios/patches/a.patch"));
    EXPECT_EQ(request.patches[1], fs::path("/abs/b.patch"));
    EXPECT_EQ(request.fragments, (std::vector<std::string>{"base", "debug"}));
    EXPECT_EQ(request.fragment_dirs[0], fs::path("/s/scenarios"));
}

TEST_F(KernelBuild, AConfigWithoutPvhBuildsAndKeepsTheBzImage) {
    GitRequest without = request();
    without.options = {{"CONFIG_PVH", "n"}};
    BuildResult built = build(without);
    ASSERT_EQ(built.outcome, BuildOutcome::ok) << built.error_lines;
    ASSERT_TRUE(built.artifact);
    EXPECT_EQ(built.artifact->image.filename(), "vmlinuz");
    // Not an ELF with the PVH note: guests boot the bzImage.
    EXPECT_EQ(built.artifact->boot_image, built.artifact->image);
    // A second request finds it by its bzImage.
    BuildResult again = build(without);
    EXPECT_TRUE(again.cache_hit);
}

TEST(KernelArtifactRecord, TheCacheAndTheDatabaseKeepEveryField) {
    TempDir dir;
    const fs::path cache = dir.path() / "cache";
    const fs::path staging = make_staging(cache).value();
    std::ofstream(staging / "vmlinuz") << "not a kernel";
    fs::create_directories(staging / "lib/modules/6.1.0-test");
    std::ofstream(staging / "lib/modules/6.1.0-test/modules.dep");
    Artifact artifact;
    artifact.release = "6.1.0-test";
    artifact.package = "linux-image-6.1.0-test";
    artifact.package_version = "6.1.1-1";
    const Artifact adopted =
        adopt_staged(staging, artifact, cache, cache / "kernels/debian/test").value();
    EXPECT_EQ(rig::test::fields_left_default(adopted), "");

    // The meta file keeps the key=value lines every rig sharing the cache reads.
    std::ifstream meta(cache / "kernels" / adopted.id / "meta");
    std::stringstream text;
    text << meta.rdbuf();
    EXPECT_EQ(text.str(), "release=6.1.0-test\npackage=linux-image-6.1.0-test\n"
                          "package_version=6.1.1-1\nimage_sha256=" +
                              adopted.image_sha256 + "\n");
    auto loaded = load_index(cache / "kernels/debian/test", cache);
    ASSERT_TRUE(loaded);
    EXPECT_EQ(rig::test::fields_differing(*loaded, adopted), "");
    EXPECT_EQ(loaded->modules_dir, cache / "kernels" / adopted.id / "lib/modules/6.1.0-test");

    // The database's row takes the fields of the same names.
    auto db = store::Database::open(dir.path() / "rig.db").value();
    core::Kernel kernel;
    kernel.name = "deb";
    ASSERT_TRUE(run::record_prebuilt(*db, *loaded, kernel));
    auto row = db->find_kernel_artifact(adopted.id).value().value();
    EXPECT_EQ(row.release, adopted.release);
    EXPECT_EQ(row.package, adopted.package);
    EXPECT_EQ(row.package_version, adopted.package_version);
    EXPECT_EQ(row.image_sha256, adopted.image_sha256);
    EXPECT_EQ(row.image_path, loaded->image.string());
    EXPECT_EQ(row.modules_path, loaded->modules_dir.string());
}

} // namespace
} // namespace rig::kernel
