// SPDX-License-Identifier: MIT
// The watcher of a child's process group: it stops the group once rig dies, even by SIGKILL.
#pragma once

#include "proc/fd.hpp"
#include "util/error.hpp"

#include <csignal>
#include <cstddef>
#include <sys/types.h>

namespace rig::proc {

// What a child's group gets when rig dies: SIGTERM first, so that make deletes the targets
// it was writing and a kernel build folder stays usable; SIGKILL after a grace of 3 s.
inline constexpr int k_parent_died = SIGTERM;

// A started watcher: its pid, and on hosts where it runs in rig's own memory, the stack it
// runs on, which is rig's to free once the watcher is reaped.
struct Watcher {
    pid_t pid = -1;
    void* stack = nullptr;
    size_t stack_size = 0;
};

// Starts the watcher of the next child's group. It reads the leader's pid from
// `from_leader` once the leader has its group, joins that group, answers one byte on
// `to_leader` (the leader execs only then), and sleeps until rig dies; then it sends the
// group SIGTERM, and SIGKILL after a grace. `to_leader`'s write end is the watcher's alone
// once this returns.
Expected<Watcher> spawn_watcher(pid_t rig, const Pipe& from_leader, Pipe& to_leader);

// SIGKILLs and reaps a watcher no one else waits for, and frees its stack.
void reap_watcher(Watcher& watcher);

} // namespace rig::proc
