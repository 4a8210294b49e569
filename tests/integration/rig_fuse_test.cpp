// SPDX-License-Identifier: MIT
// rig-fuse on this host rather than in a guest: a folder served through every kind of
// request it handles, and its invalidation benchmark. Seconds, no guest, so that
// scripts/test's sanitized build runs the daemon's own code under ASan and UBSan.
#include "proc/process.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_text(const fs::path& file, const std::string& text) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

std::string rig_fuse() {
    const char* binary = std::getenv("RIG_FUSE");
    return binary ? binary : "rig-fuse";
}

// A folder of the test's own, removed with what is in it.
struct Folder {
    fs::path path;
    Folder() {
        std::string pattern = (fs::temp_directory_path() / "rig-fuse-test-XXXXXX").string();
        path = ::mkdtemp(pattern.data()) ? fs::path(pattern) : fs::path();
    }
    ~Folder() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

bool mounted(const fs::path& mountpoint) {
    std::istringstream mounts(read_text("/proc/self/mounts"));
    std::string device, where;
    std::string rest;
    while (mounts >> device >> where && std::getline(mounts, rest))
        if (where == mountpoint.string())
            return true;
    return false;
}

// "NAME COUNT" lines of rig-fuse's --counts file.
std::map<std::string, uint64_t> counts_in(const fs::path& file) {
    std::map<std::string, uint64_t> counts;
    std::istringstream text(read_text(file));
    std::string name;
    uint64_t count = 0;
    while (text >> name >> count)
        counts[name] = count;
    return counts;
}

} // namespace

// Every request rig-fuse serves, through the kernel's FUSE mount of a folder, then an
// unmount that ends the daemon with status 0 (under the sanitizers: no report, no leak).
TEST(RigFuse, ServesAFolderThroughEveryRequestAndExitsCleanly) {
    Folder folder;
    ASSERT_FALSE(folder.path.empty());
    const fs::path source = folder.path / "source", mountpoint = folder.path / "mnt";
    fs::create_directories(source / "dir");
    fs::create_directories(mountpoint);
    write_text(source / "dir" / "old.txt", "hello from the source\n");
    for (int i = 0; i < 40; ++i)
        write_text(source / ("file" + std::to_string(i)), std::to_string(i));

    rig::proc::SpawnOptions options;
    options.stdout_file = folder.path / "rig-fuse.log";
    auto daemon = rig::proc::Child::spawn({rig_fuse(), "--attr-timeout", "0", "--entry-timeout",
                                           "0", "--counts", (folder.path / "counts").string(),
                                           "--source", source.string(), mountpoint.string()},
                                          options);
    ASSERT_TRUE(daemon) << daemon.error().message;
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!mounted(mountpoint) && (*daemon)->running() &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    ASSERT_TRUE(mounted(mountpoint)) << "rig-fuse did not mount (it needs /dev/fuse): "
                                     << read_text(folder.path / "rig-fuse.log");

    // Lookups, getattr, open, read, readdir(plus), release.
    EXPECT_EQ(read_text(mountpoint / "dir" / "old.txt"), "hello from the source\n");
    size_t entries = 0;
    for (const auto& entry : fs::directory_iterator(mountpoint)) {
        (void)entry.status();
        ++entries;
    }
    EXPECT_EQ(entries, 41u);
    // create, write, flush, fsync, setattr (truncate and chmod).
    {
        int fd = ::open((mountpoint / "new.txt").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        ASSERT_GE(fd, 0) << std::strerror(errno);
        EXPECT_EQ(::write(fd, "written through fuse", 20), 20);
        EXPECT_EQ(::fsync(fd), 0);
        EXPECT_EQ(::ftruncate(fd, 7), 0);
        EXPECT_EQ(::close(fd), 0);
    }
    EXPECT_EQ(::chmod((mountpoint / "new.txt").c_str(), 0600), 0);
    EXPECT_EQ(read_text(source / "new.txt"), "written");
    EXPECT_EQ(fs::status(source / "new.txt").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    // mkdir, rename, link, symlink, readlink, mknod (a fifo), unlink, rmdir, statfs.
    fs::create_directory(mountpoint / "made");
    fs::rename(mountpoint / "new.txt", mountpoint / "made" / "moved.txt");
    fs::create_hard_link(mountpoint / "made" / "moved.txt", mountpoint / "hard.txt");
    fs::create_symlink("made/moved.txt", mountpoint / "soft");
    EXPECT_EQ(fs::read_symlink(mountpoint / "soft"), "made/moved.txt");
    EXPECT_EQ(read_text(mountpoint / "soft"), "written");
    EXPECT_EQ(::mkfifo((mountpoint / "fifo").c_str(), 0644), 0) << std::strerror(errno);
    EXPECT_TRUE(fs::is_fifo(source / "fifo"));
    EXPECT_TRUE(fs::remove(mountpoint / "hard.txt"));
    EXPECT_TRUE(fs::remove(mountpoint / "fifo"));
    EXPECT_EQ(fs::remove_all(mountpoint / "made"), 2u);
    EXPECT_FALSE(fs::exists(source / "made"));
    EXPECT_GT(fs::space(mountpoint).capacity, 0u);
    EXPECT_TRUE(fs::is_symlink(source / "soft"));

    // The counts, written on SIGUSR1 as the agent asks for them.
    ASSERT_EQ(::kill((*daemon)->pid(), SIGUSR1), 0);
    deadline = std::chrono::steady_clock::now() + 10s;
    while (!fs::exists(folder.path / "counts") && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    auto counts = counts_in(folder.path / "counts");
    EXPECT_EQ(counts["seq"], 1u);
    for (const char* request :
         {"lookup", "getattr", "create", "write", "mkdir", "rename", "symlink", "unlink", "rmdir"})
        EXPECT_GT(counts[request], 0u) << request << "\n" << read_text(folder.path / "counts");
    EXPECT_GT(counts["requests"], 50u);

    // An unmount ends the daemon's loop: it exits 0, and a sanitizer report would not.
    auto unmounted = rig::proc::run({"fusermount3", "-u", mountpoint.string()});
    ASSERT_TRUE(unmounted) << unmounted.error().message;
    EXPECT_EQ(unmounted->exit_code, 0) << unmounted->err;
    auto status = (*daemon)->wait_for(20s);
    ASSERT_TRUE(status) << "rig-fuse still runs after its unmount";
    EXPECT_EQ(*status, 0) << read_text(folder.path / "rig-fuse.log");
}

// The FUSE invalidation benchmark mounts, walks and invalidates on its own, and prints its
// metrics; small sizes, two rounds.
TEST(RigFuse, InvalidationBenchmarkOnThisHost) {
    Folder folder;
    ASSERT_FALSE(folder.path.empty());
    rig::proc::RunOptions options;
    options.timeout = 2min;
    auto result =
        rig::proc::run({rig_fuse(), "--bench-invalidate", "20,300", "--rounds", "2", "--source",
                        (folder.path / "source").string(), (folder.path / "mnt").string()},
                       options);
    ASSERT_TRUE(result) << result.error().message;
    ASSERT_EQ(result->exit_code, 0) << result->out << result->err;
    for (const char* metric : {"rig-metric inval_inode_us_20 ", "rig-metric inval_lookups_300 ",
                               "rig-metric inval_notify_errors_300 0.000 count",
                               "rig-metric fuse_proto_minor ", "rig-metric inval_rounds 2.000"})
        EXPECT_NE(result->out.find(metric), std::string::npos) << metric << "\n" << result->out;
    EXPECT_FALSE(mounted(folder.path / "mnt"));
}

// Bad arguments are a usage message and status 2, before anything is mounted.
TEST(RigFuse, BadArgumentsAreAUsageError) {
    for (std::vector<std::string> args :
         {std::vector<std::string>{"--attr-timeout", "1e9", "--source", "/", "/mnt"},
          {"--bench-invalidate", "0", "--source", "/", "/mnt"},
          {"--rounds", "-3", "--source", "/", "/mnt"},
          {"--source"},
          {"--no-such-option"},
          {"--source", "/"}}) {
        args.insert(args.begin(), rig_fuse());
        auto result = rig::proc::run(args);
        ASSERT_TRUE(result) << result.error().message;
        EXPECT_EQ(result->exit_code, 2) << args[1];
        EXPECT_NE(result->err.find("usage: rig-fuse"), std::string::npos) << result->err;
    }
}
