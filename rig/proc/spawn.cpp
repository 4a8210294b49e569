// SPDX-License-Identifier: MIT
// Spawning with Boost.Process: a new process group, its watcher started first, own stdio.
#include "proc/spawn.hpp"

#include "proc/fd.hpp"
#include "proc/process.hpp"
#include "proc/watcher.hpp"

// Boost 1.74 offers vfork only where the feature macros say POSIX.1-2001 and not later
// (vfork left the standard in 2008); Linux's C library has it, and this says so.
#define BOOST_POSIX_HAS_VFORK 1
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/posix.hpp>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <grp.h>
#include <mutex>
#include <string_view>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace rig::proc {

namespace {

namespace bp = boost::process;

// Exit code of a child whose setup between fork and exec failed; the parent sees the
// error (Launch::setup_failure, or Boost's exec-error pipe), never this code.
constexpr int k_setup_failed = 127;

// How the child is made. A shared-memory child (vfork) copies nothing of rig, which under
// the address sanitizer is hundreds of MB of page tables; it runs in rig's memory until it
// execs, with rig's thread suspended, and so must not allocate nor take a lock. A user
// namespace cannot be entered from it (unshare refuses a process that shares its memory):
// that child is forked.
enum class Fork { copy, shared_memory };

// Boost.Process extension doing what Boost cannot: a new process group, PDEATHSIG, stdio
// from our own CLOEXEC descriptors, and reaping the pid Boost forgets on exec failure.
class ChildSetup final : public bp::extend::handler {
public:
    ChildSetup(Launch& launch, Fork fork) : m_launch(launch), m_fork(fork) {}

    template <class Executor> void on_setup(Executor& exec) const {
        if (!m_launch.envp.empty())
            exec.env = m_launch.envp.data();
    }

    // Runs in the child before exec: async-signal-safe calls only, and no allocation.
    template <class Executor> void on_exec_setup(Executor& exec) const {
        auto die = [&exec, this](const char* what) {
            int error = errno;
            if (m_fork == Fork::shared_memory) {
                // Read by on_success in rig once the child has left its memory.
                m_launch.setup_errno = error;
                m_launch.setup_failure = what;
            } else {
                // Boost sends this to the parent through its exec-error pipe.
                exec.set_error(std::error_code(error, std::system_category()), what);
            }
            ::_exit(k_setup_failed);
        };
        // Its own group, so a timeout or stop() reaches everything it starts, and a
        // terminal's Ctrl-C reaches only rig, which then shuts children down in order.
        if (::setpgid(0, 0) != 0)
            die("setpgid failed");
        if (m_launch.new_network && !enter_network_namespace())
            die("cannot give the child a network namespace of its own");
        if (!m_launch.mounts.empty() && !make_mounts())
            die("cannot make the child's binds");
        if (m_launch.drop_user && !drop_user())
            die("cannot become the child's user");
        // After the user is dropped: a change of credentials clears it. PDEATHSIG fires when the
        // *thread* that forked exits, not the process: a Child must be spawned from a long-lived
        // thread (the main thread). run() is safe from any thread because it waits for the child in
        // the thread that forked it. The rest of the group is the watcher's (watcher.hpp).
        if (::prctl(PR_SET_PDEATHSIG, k_parent_died) != 0)
            die("prctl(PR_SET_PDEATHSIG) failed");
        // rig may have died between fork and prctl; then no signal will ever come.
        if (::getppid() != m_launch.parent)
            ::_exit(k_setup_failed);
        for (int target = 0; target < 3; ++target) {
            if (::dup2(m_launch.stdio[target], target) < 0)
                die("dup2 failed");
        }
        if (!m_launch.cwd.empty() && ::chdir(m_launch.cwd.c_str()) != 0)
            die("chdir failed");
        // Before exec, so that every thread the program starts is born on these CPUs.
        if (m_launch.affinity &&
            ::sched_setaffinity(0, sizeof(cpu_set_t), &*m_launch.affinity) != 0)
            die("sched_setaffinity failed");
        // The program runs only once the watcher is in its group: whatever it starts is
        // then watched from its first instruction.
        pid_t self = ::getpid();
        char joined = 0;
        if (::write(m_launch.to_watcher, &self, sizeof self) != sizeof self)
            die("cannot reach the group's watcher");
        if (::read(m_launch.from_watcher, &joined, 1) != 1) {
            errno = ECHILD;
            die("the group's watcher did not join");
        }
        // A blocked mask and ignored signals survive exec: a child must not inherit
        // rig's blocked SIGTERM, an ignored SIGPIPE that turns `cmd | head` into EPIPE
        // errors, nor what the shell that started rig ignored (a background job's SIGINT
        // and SIGQUIT): it starts with every signal at its default, and rig supervises
        // it. Last, just before exec, and only once none of rig's handlers is left (exec
        // would reset them anyway): a signal caught in between would run one in the
        // child, in rig's memory when the child shares it (the interrupt flag).
        struct sigaction default_action {};
        default_action.sa_handler = SIG_DFL;
        for (int number = 1; number < NSIG; ++number)
            if (number != SIGKILL && number != SIGSTOP)
                ::sigaction(number, &default_action, nullptr);
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
    }

    // In rig, once the child has exec'd or died: a shared-memory child's setup failure.
    template <class Executor> void on_success(Executor& exec) const {
        if (m_launch.setup_failure)
            exec.set_error(std::error_code(m_launch.setup_errno, std::system_category()),
                           m_launch.setup_failure);
    }

    // On exec failure Boost returns an empty child and never waits for the pid it forked.
    template <class Executor> void on_error(Executor& exec, const std::error_code&) const {
        if (exec.pid > 0)
            kill_and_reap(exec.pid);
    }

private:
    // A mount namespace of its own, private so that nothing reaches the host's, with a
    // tmpfs over mount_root and each bind made in it. Each source is opened in the new
    // namespace before the tmpfs covers it (a bind's source must be one of the namespace's
    // own mounts) and bound through /proc/self/fd. Async-signal-safe calls only.
    bool make_mounts() const {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
            return false;
        int sources[Launch::k_most_mounts];
        size_t count = m_launch.mounts.size();
        if (count > Launch::k_most_mounts)
            return false;
        for (size_t i = 0; i < count; ++i) {
            sources[i] = ::open(m_launch.mounts[i].source.c_str(), O_PATH | O_CLOEXEC);
            if (sources[i] < 0)
                return false;
        }
        if (::mount("rig", m_launch.mount_root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                    m_launch.mount_root_options.c_str()) != 0)
            return false;
        for (size_t i = 0; i < count; ++i) {
            const Launch::Mount& bind = m_launch.mounts[i];
            const char* target = bind.target.c_str();
            if (bind.directory) {
                if (::mkdir(target, 0755) != 0)
                    return false;
            } else {
                int fd = ::open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd < 0)
                    return false;
                ::close(fd);
            }
            char source[32];
            fd_path(sources[i], source);
            // Recursive: a folder's own mounts (a capped share) come with it.
            if (::mount(source, target, nullptr, MS_BIND | MS_REC, nullptr) != 0)
                return false;
            if (bind.readonly &&
                ::mount(nullptr, target, nullptr,
                        MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0)
                return false;
            ::close(sources[i]);
        }
        return true;
    }

    // As root a new network namespace alone; as a normal user, one inside a new user
    // namespace that maps rig's user and group to themselves (setgroups denied first, as
    // the kernel requires of an unprivileged gid_map). Async-signal-safe calls only.
    bool enter_network_namespace() const {
        if (m_launch.uid_map.empty())
            return ::unshare(CLONE_NEWNET) == 0;
        return ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 &&
               write_file("/proc/self/setgroups", "deny") &&
               write_file("/proc/self/uid_map", m_launch.uid_map) &&
               write_file("/proc/self/gid_map", m_launch.gid_map);
    }

    static bool write_file(const char* path, std::string_view text) {
        int fd = ::open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return false;
        bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        return written;
    }

    // "/proc/self/fd/N" without the allocator, which another thread may have held at fork.
    static void fd_path(int fd, char (&out)[32]) {
        constexpr char k_prefix[] = "/proc/self/fd/";
        size_t at = 0;
        for (char c : std::string_view(k_prefix))
            out[at++] = c;
        char digits[12];
        size_t n = 0;
        do {
            digits[n++] = static_cast<char>('0' + fd % 10);
            fd /= 10;
        } while (fd > 0);
        while (n > 0)
            out[at++] = digits[--n];
        out[at] = '\0';
    }

    // System calls, not libc's setuid and friends: in a process of many threads those
    // signal each thread to change its credentials too, and a shared-memory child would
    // signal rig's.
    bool drop_user() const {
        return ::syscall(SYS_setgroups, m_launch.groups.size(), m_launch.groups.data()) == 0 &&
               ::syscall(SYS_setresgid, m_launch.gid, m_launch.gid, m_launch.gid) == 0 &&
               ::syscall(SYS_setresuid, m_launch.uid, m_launch.uid, m_launch.uid) == 0 &&
               ::syscall(SYS_setuid, 0) != 0; // no way back
    }

    Launch& m_launch;
    Fork m_fork;
};

} // namespace

bool is_executable_file(const std::filesystem::path& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

std::filesystem::path absolute_or_same(const std::filesystem::path& path) {
    std::error_code ec;
    auto result = std::filesystem::absolute(path, ec);
    return ec ? path : result;
}

void kill_and_reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

Expected<Launch> prepare(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                         const std::map<std::string, std::string>& env) {
    if (argv.empty() || argv[0].empty())
        return fail(ErrorKind::infra, "cannot start an empty command");
    Launch launch;
    launch.name = argv[0];
    if (argv[0].find('/') != std::string::npos) {
        // Made absolute here so that the child's chdir cannot change what it names.
        launch.exe = absolute_or_same(argv[0]).string();
    } else {
        auto found = find_program(argv[0]);
        if (!found)
            return fail(ErrorKind::infra, "cannot start " + argv[0] + ": not found in PATH");
        launch.exe = found->string();
    }
    launch.args.assign(argv.begin() + 1, argv.end());

    if (!cwd.empty()) {
        // Checked here for a clear message; the child's chdir error only carries errno.
        std::error_code ec;
        if (!std::filesystem::is_directory(cwd, ec))
            return fail(ErrorKind::infra,
                        "cannot start " + argv[0] + ": no directory " + cwd.string());
        launch.cwd = cwd.string();
    }

    if (!env.empty()) {
        for (char** entry = environ; entry && *entry; ++entry) {
            std::string_view text(*entry);
            std::string key(text.substr(0, text.find('=')));
            if (!env.contains(key))
                launch.env_storage.emplace_back(text);
        }
        for (const auto& [key, value] : env)
            launch.env_storage.push_back(key + "=" + value);
        for (auto& entry : launch.env_storage)
            launch.envp.push_back(entry.data());
        launch.envp.push_back(nullptr);
    }
    launch.parent = ::getpid();
    return launch;
}

Expected<Spawned> spawn_group(Launch& launch) {
    // Boost creates its exec-error pipe without O_CLOEXEC and sets FD_CLOEXEC afterwards.
    // A fork from another thread in between would hand the write end to that child, and
    // this spawn would then block until that child (QEMU, say) exits. One spawn at a time.
    static std::mutex spawn_mutex;
    std::lock_guard lock(spawn_mutex);
    // The watcher is forked first and joins the child's group before the child execs: a
    // child nothing would stop after a kill of rig does not run at all.
    Pipe to_watcher = RIG_TRY(blocking_pipe());
    Pipe to_leader = RIG_TRY(blocking_pipe());
    Watcher watcher = RIG_TRY(spawn_watcher(launch.parent, to_watcher, to_leader));
    to_watcher.read.reset();
    launch.to_watcher = to_watcher.write.get();
    launch.from_watcher = to_leader.read.get();
    Fork fork = launch.uid_map.empty() ? Fork::shared_memory : Fork::copy;
    ChildSetup setup(launch, fork);
    std::error_code ec;
    pid_t pid = -1;
    try {
        bp::child child = fork == Fork::shared_memory
                              ? bp::child(bp::exe = launch.exe, bp::args = launch.args, setup, ec,
                                          bp::posix::use_vfork)
                              : bp::child(bp::exe = launch.exe, bp::args = launch.args, setup, ec);
        if (!ec && child.valid()) {
            pid = child.id();
            // From here on Group owns the pid: kills and reaps are explicit, and Boost's
            // running() can no longer reap it behind our back nor ~child() kill it.
            child.detach();
        }
    } catch (const std::exception& e) {
        reap_watcher(watcher);
        return fail(ErrorKind::infra, "cannot start " + launch.name + ": " + e.what());
    }
    if (pid <= 0) {
        reap_watcher(watcher);
        return fail(ErrorKind::infra, "cannot start " + launch.name + ": " +
                                          (ec ? ec.message() : std::string("unknown error")));
    }
    return Spawned{pid, watcher};
}

} // namespace rig::proc
