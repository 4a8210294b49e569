// SPDX-License-Identifier: MIT
// Starting a child as its own process group's leader, with the group's watcher.
#pragma once

#include "proc/watcher.hpp"
#include "util/error.hpp"

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <sched.h>
#include <string>
#include <sys/types.h>
#include <vector>

namespace rig::proc {

bool is_executable_file(const std::filesystem::path& path);
std::filesystem::path absolute_or_same(const std::filesystem::path& path);

// SIGKILL, then reaps: for a pid nothing else waits for.
void kill_and_reap(pid_t pid);

// Everything the child needs between fork and exec, prepared in the parent because only
// async-signal-safe calls are allowed there: another rig thread may hold malloc's lock at
// the moment of fork.
struct Launch {
    std::string name; // argv[0] as given, for messages
    std::string exe;
    std::vector<std::string> args;
    std::vector<std::string> env_storage;
    std::vector<char*> envp; // empty: inherit environ unchanged
    std::string cwd;
    std::array<int, 3> stdio{-1, -1, -1};
    pid_t parent = -1;
    std::optional<cpu_set_t> affinity; // nullopt: inherit rig's
    // Binds made in a new mount namespace (SpawnOptions::binds): sources as
    // /proc/self/fd/N of O_PATH descriptors the caller keeps open until the spawn returns.
    struct Mount {
        std::string source;
        std::string target;
        bool directory = false;
        bool readonly = false;
    };
    std::vector<Mount> mounts; // at most k_most_mounts
    static constexpr size_t k_most_mounts = 16;
    std::string mount_root; // the tmpfs the targets are made in
    std::string mount_root_options;
    // A network namespace of its own; as a normal user inside a user namespace whose maps
    // (these lines, empty as root) give it rig's user alone.
    bool new_network = false;
    std::string uid_map;
    std::string gid_map;
    // The user the child becomes; groups is the supplementary list.
    bool drop_user = false;
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
    // The handshake with the group's watcher (spawn_group): the child writes its pid to
    // the first and execs once the second brings a byte.
    int to_watcher = -1;
    int from_watcher = -1;
    // Where a child that shares rig's memory until exec leaves why its setup failed.
    int setup_errno = 0;
    const char* setup_failure = nullptr;
};

// The launch of argv with its working folder and added environment; stdio and affinity
// are the caller's to fill in. Fails when argv[0] is not found or cwd is no folder.
Expected<Launch> prepare(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                         const std::map<std::string, std::string>& env);

// A started child: the leader of its own process group, and the watcher in that group.
struct Spawned {
    pid_t leader = -1;
    Watcher watcher;
};

// Starts the watcher, then forks and execs; the child is a process group leader not
// tracked by Boost any more.
Expected<Spawned> spawn_group(Launch& launch);

} // namespace rig::proc
