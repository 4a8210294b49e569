// SPDX-License-Identifier: MIT
// Spawning and supervising processes from argument vectors; never through a shell.
// The only folder that includes Boost.Process.
#pragma once

#include "util/error.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace rig::proc {

// Who a child runs as: set between fork and exec, when rig runs as root.
struct Credentials {
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups; // supplementary; the account's own, looked up by the caller
};

// Where binds appear: a tmpfs mounted over /tmp in the child's own mount namespace, which
// the child's user may walk wherever the sources lie (a results folder under /root, say).
inline constexpr const char* k_bind_root = "/tmp";

// A file or folder of rig's that a child run as another user sees at `target`, a path
// directly under k_bind_root.
struct Bind {
    std::filesystem::path source;
    std::filesystem::path target;
    bool readonly = false;
};

// What a child may reach beyond rig's own rights being narrowed: whom it runs as, what it
// sees of rig's files, and whether it has a network.
struct Confinement {
    // Run as this user: supplementary groups, then group and user are set before exec,
    // after the binds. nullopt: rig's own user.
    std::optional<Credentials> user;
    // Made in a mount namespace of the child's own (needs root, so only with `user`).
    std::vector<Bind> binds;
    // k_bind_root is a /tmp the child's user may write to (mode 1777, up to 1 GiB) rather
    // than a small folder only the binds are made in: a compiler's temporary files.
    bool writable_bind_root = false;
    // A network namespace of the child's own, with nothing in it but a loopback that is
    // down. As root directly; as a normal user inside a user namespace that maps only
    // rig's own user (and so gives no right rig lacks).
    bool no_network = false;
};

struct RunOptions {
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
    std::filesystem::path cwd;              // empty: inherit
    std::map<std::string, std::string> env; // added to the inherited environment
    size_t max_output = 1 << 20;            // per stream; the tail beyond is dropped
    Confinement confinement;
};

struct RunResult {
    int exit_code = -1; // -1 when killed by a signal or timed out
    int signal = 0;
    bool timed_out = false;
    std::string out; // at most max_output bytes, the tail when truncated
    std::string err;
};

// Runs argv[0] to completion, with stdin from /dev/null and both output streams captured.
// argv[0] is searched in PATH unless it contains '/'; a relative path is relative to rig's
// working directory, not options.cwd. Only a failure to start is an Error; a non-zero exit
// or a timeout is a result. The child runs in its own process group: on timeout the whole
// group gets SIGKILL, and when the child exits whatever is left in its group is killed too,
// so nothing it started outlives it unless it left the group (setsid). Output still open
// after that (held by such an escapee) is read for a short grace, then abandoned. The
// group dies with rig, as a Child's does. Safe to call from any thread.
Expected<RunResult> run(const std::vector<std::string>& argv, const RunOptions& options = {});

// The absolute path of an executable regular file: `name` itself when it contains '/',
// otherwise the first match in PATH. nullopt when there is none.
std::optional<std::filesystem::path> find_program(const std::string& name);

struct SpawnOptions {
    std::filesystem::path cwd;
    std::map<std::string, std::string> env;
    std::filesystem::path stdout_file; // empty: /dev/null; truncated when opened
    std::filesystem::path stderr_file; // empty: same as stdout_file
    // The CPUs the child and all its threads may run on; empty: rig's own.
    std::vector<int> cpus;
    Confinement confinement;
};

// A long-running child such as QEMU, virtiofsd or make, with stdin from /dev/null, in its
// own process group. When rig dies, even by SIGKILL, the whole group dies with it: SIGTERM
// first (make deletes the targets it was writing), SIGKILL 3 s later. A watcher named
// rig-watcher (watcher.hpp) stays in the group for that (PR_SET_PDEATHSIG alone would
// reach the leader, not what it started). The group is killed with SIGKILL when the Child
// is destroyed while still running. Once it has exited (seen by running(), wait_for() or
// stop()) it is reaped and the rest of its process group is killed.
// PR_SET_PDEATHSIG fires when the *thread* that spawned the child exits, not the process:
// spawn from a thread that lives as long as the child should (the main thread).
// A Child is not thread-safe; use it from one thread at a time.
class Child final {
public:
    static Expected<std::unique_ptr<Child>> spawn(const std::vector<std::string>& argv,
                                                  const SpawnOptions& options = {});
    ~Child();
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    // Meaningless once the child has been reaped: the number may belong to another process.
    int pid() const;
    bool running();
    // SIGTERM to its process group, then SIGKILL after `grace`; reaps. Returns
    // exit_status().
    int stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
    // Waits up to `timeout`; nullopt when still running. Polls, because Boost 1.74's
    // wait_for is unreliable.
    std::optional<int> wait_for(std::chrono::milliseconds timeout);
    // Exit code, or 128 + signal as a shell would print it; nullopt while running or not
    // yet observed; -1 when someone else reaped the child (SIGCHLD ignored).
    std::optional<int> exit_status() const;

    struct Impl;

private:
    explicit Child(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace rig::proc
