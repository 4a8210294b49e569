// SPDX-License-Identifier: MIT
// Spawning with Boost.Process, then supervising each child as a process group with raw
// waitid/kill, and draining captured output with poll().
#include "proc/process.hpp"

#include "util/tail.hpp"

#include <algorithm>
#include <array>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <string_view>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <utility>

namespace rig::proc {

namespace {

namespace bp = boost::process;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Caps each wait so that a child which exited while a grandchild still holds its pipes
// is noticed without waiting for EOF.
constexpr auto k_poll_interval = 50ms;
// How long output is still read after the child is gone, for escapees that left its
// process group but kept its pipes.
constexpr auto k_output_linger = 250ms;
constexpr auto k_max_backoff = 20ms;
// Exit code of a child whose setup between fork and exec failed; the parent sees the
// error through Boost's exec-error pipe, never this code.
constexpr int k_setup_failed = 127;
// A wait status that waitpid never produces: someone else reaped the child.
constexpr int k_lost_status = -1;
// What a child's group gets when rig dies: SIGTERM first, so that make deletes the targets
// it was writing and a kernel build folder stays usable; SIGKILL after the grace.
constexpr int k_parent_died = SIGTERM;
constexpr int k_watcher_wakeup = SIGUSR1;
constexpr auto k_orphan_grace = 3s;

std::string errno_message(int error) {
    return std::system_category().message(error);
}

// Saturates, so that a caller's milliseconds::max() means "no deadline", not overflow.
Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
    auto now = Clock::now();
    auto room =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now);
    return timeout >= room ? Clock::time_point::max() : now + timeout;
}

class Fd final {
public:
    Fd() = default;
    explicit Fd(int fd) : m_fd(fd) {}
    Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            m_fd = std::exchange(other.m_fd, -1);
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }

    int get() const { return m_fd; }
    bool valid() const { return m_fd >= 0; }
    void reset() {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
    }

private:
    int m_fd = -1;
};

// The child dup2()s these onto 0, 1 and 2; a source below 3 could be overwritten by an
// earlier dup2 (rig started with a closed stdio fd), so move it out of the way.
Expected<Fd> above_stdio(Fd fd) {
    if (fd.get() >= 3)
        return fd;
    int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0)
        return fail(ErrorKind::infra, "fcntl(F_DUPFD_CLOEXEC): " + errno_message(errno));
    return Fd(moved);
}

// O_CLOEXEC everywhere: another thread may fork a child concurrently, and an inherited
// write end of our pipe would keep it from ever reaching EOF.
Expected<Fd> open_fd(const std::filesystem::path& path, int flags) {
    int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(ErrorKind::infra, "cannot open " + path.string() + ": " + errno_message(errno));
    return above_stdio(Fd(fd));
}

struct Pipe {
    Fd read;
    Fd write;
};

// Both ends blocking and close-on-exec.
Expected<Pipe> blocking_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return fail(ErrorKind::infra, "pipe2: " + errno_message(errno));
    Pipe pipe{Fd(fds[0]), Fd(fds[1])};
    pipe.read = RIG_TRY(above_stdio(std::move(pipe.read)));
    pipe.write = RIG_TRY(above_stdio(std::move(pipe.write)));
    return pipe;
}

Expected<Pipe> make_pipe() {
    Pipe pipe = RIG_TRY(blocking_pipe());
    // Only our end is non-blocking; the child's writes must block when the pipe is full.
    int flags = ::fcntl(pipe.read.get(), F_GETFL);
    if (flags < 0 || ::fcntl(pipe.read.get(), F_SETFL, flags | O_NONBLOCK) < 0)
        return fail(ErrorKind::infra, "fcntl(O_NONBLOCK): " + errno_message(errno));
    return pipe;
}

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
    // The handshake with the group's watcher (spawn_group): the child writes its pid to
    // the first and execs once the second brings a byte.
    int to_watcher = -1;
    int from_watcher = -1;
};

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

// Boost.Process extension doing what Boost cannot: a new process group, PDEATHSIG, stdio
// from our own CLOEXEC descriptors, and reaping the pid Boost forgets on exec failure.
class ChildSetup final : public bp::extend::handler {
public:
    explicit ChildSetup(Launch& launch) : m_launch(launch) {}

    template <class Executor> void on_setup(Executor& exec) const {
        if (!m_launch.envp.empty())
            exec.env = m_launch.envp.data();
    }

    // Runs in the forked child: async-signal-safe calls only.
    template <class Executor> void on_exec_setup(Executor& exec) const {
        auto die = [&exec](const char* what) {
            int error = errno;
            // Boost sends this to the parent through its exec-error pipe.
            exec.set_error(std::error_code(error, std::system_category()), what);
            ::_exit(k_setup_failed);
        };
        // Its own group, so a timeout or stop() reaches everything it starts, and a
        // terminal's Ctrl-C reaches only rig, which then shuts children down in order.
        if (::setpgid(0, 0) != 0)
            die("setpgid failed");
        // PDEATHSIG fires when the *thread* that forked exits, not the process: a Child
        // must be spawned from a long-lived thread (the main thread). run() is safe from
        // any thread because it waits for the child in the thread that forked it. The
        // rest of the group is the watcher's (watch_group).
        if (::prctl(PR_SET_PDEATHSIG, k_parent_died) != 0)
            die("prctl(PR_SET_PDEATHSIG) failed");
        // rig may have died between fork and prctl; then no signal will ever come.
        if (::getppid() != m_launch.parent)
            ::_exit(k_setup_failed);
        for (int target = 0; target < 3; ++target) {
            if (::dup2(m_launch.stdio[target], target) < 0)
                die("dup2 failed");
        }
        // A blocked mask and ignored signals survive exec: a child must not inherit
        // rig's blocked SIGTERM, nor an ignored SIGPIPE that turns `cmd | head` into
        // EPIPE errors.
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        struct sigaction default_action {};
        default_action.sa_handler = SIG_DFL;
        ::sigaction(SIGPIPE, &default_action, nullptr);
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
    }

    // On exec failure Boost returns an empty child and never waits for the pid it forked.
    template <class Executor> void on_error(Executor& exec, const std::error_code&) const {
        if (exec.pid > 0)
            kill_and_reap(exec.pid);
    }

private:
    Launch& m_launch;
};

// Runs in a forked copy of rig that joins the child's process group before the child
// execs and stops the whole group once rig dies, even by SIGKILL: PR_SET_PDEATHSIG
// reaches the leader alone, and a killed make would leave its sub-makes and compilers
// running in the build folder. The grace is measured once it has left the group, so that
// it can tell when the rest is gone. Async-signal-safe calls only: rig is multithreaded
// and another thread may have held any lock at the fork.
[[noreturn]] void watch_group(pid_t rig, int from_leader, int to_leader) {
    sigset_t all;
    ::sigfillset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    ::prctl(PR_SET_PDEATHSIG, k_watcher_wakeup);
    ::prctl(PR_SET_NAME, "rig-watcher");
    // The leader's pid, once it has its group; end of file: it never got that far.
    pid_t group = -1;
    if (::read(from_leader, &group, sizeof group) != sizeof group || ::setpgid(0, group) != 0)
        ::_exit(0);
    char joined = 1;
    (void)::write(to_leader, &joined, 1);
    // rig's descriptors would keep pipes from reaching EOF and flocks held after rig died.
    ::close_range(0, ~0U, 0);
    sigset_t wakeup;
    ::sigemptyset(&wakeup);
    ::sigaddset(&wakeup, k_watcher_wakeup);
    // rig may have died before the prctl; a stray SIGUSR1 to the group changes nothing.
    while (::getppid() == rig)
        ::sigwaitinfo(&wakeup, nullptr);
    ::setpgid(0, 0);
    ::kill(-group, k_parent_died);
    constexpr timespec k_pause{0, 50'000'000};
    for (auto waited = 0ms; waited < k_orphan_grace && ::kill(-group, 0) == 0; waited += 50ms)
        ::nanosleep(&k_pause, nullptr);
    ::kill(-group, SIGKILL);
    ::_exit(0);
}

// Forks the watcher of the next child's group, which waits for that child's pid (see
// watch_group and ChildSetup). `to_leader` is the watcher's alone once this returns.
Expected<pid_t> spawn_watcher(pid_t rig, const Pipe& from_leader, Pipe& to_leader) {
    pid_t pid = ::fork();
    if (pid == 0) {
        // Its own copy of the write end would keep it from ever seeing end of file.
        ::close(from_leader.write.get());
        watch_group(rig, from_leader.read.get(), to_leader.write.get());
    }
    if (pid < 0)
        return fail(ErrorKind::infra, "fork: " + errno_message(errno));
    // The leader must see end of file, not wait forever, if the watcher dies.
    to_leader.write.reset();
    return pid;
}

// A started child: the leader of its own process group, and the watcher in that group.
struct Spawned {
    pid_t leader = -1;
    pid_t watcher = -1;
};

// Forks and execs; the child is a process group leader not tracked by Boost any more.
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
    pid_t watcher = RIG_TRY(spawn_watcher(launch.parent, to_watcher, to_leader));
    to_watcher.read.reset();
    launch.to_watcher = to_watcher.write.get();
    launch.from_watcher = to_leader.read.get();
    ChildSetup setup(launch);
    std::error_code ec;
    pid_t pid = -1;
    try {
        bp::child child(bp::exe = launch.exe, bp::args = launch.args, setup, ec);
        if (!ec && child.valid()) {
            pid = child.id();
            // From here on Group owns the pid: kills and reaps are explicit, and Boost's
            // running() can no longer reap it behind our back nor ~child() kill it.
            child.detach();
        }
    } catch (const std::exception& e) {
        kill_and_reap(watcher);
        return fail(ErrorKind::infra, "cannot start " + launch.name + ": " + e.what());
    }
    if (pid <= 0) {
        kill_and_reap(watcher);
        return fail(ErrorKind::infra, "cannot start " + launch.name + ": " +
                                          (ec ? ec.message() : std::string("unknown error")));
    }
    return Spawned{pid, watcher};
}

// A child and its process group. Signals go to the group only while the leader is not
// reaped: its zombie pins the group id, so the number cannot name a stranger's group.
class Group final {
public:
    explicit Group(Spawned spawned) : m_pid(spawned.leader), m_watcher(spawned.watcher) {}
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() { finish(); }

    pid_t pid() const { return m_pid; }
    const std::optional<int>& wait_status() const { return m_status; }

    // Whether the leader has exited; peeks (WNOWAIT) so that it is not reaped yet.
    bool exited() {
        if (m_status)
            return true;
        siginfo_t info{};
        int rc;
        do
            rc = ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT);
        while (rc < 0 && errno == EINTR);
        if (rc < 0) {
            m_status = k_lost_status;
            return true;
        }
        return info.si_pid != 0;
    }

    // Polls with backoff instead of blocking so the deadline holds; see the header.
    bool wait_until(Clock::time_point deadline) {
        Clock::duration pause = 1ms;
        while (!exited()) {
            auto now = Clock::now();
            if (now >= deadline)
                return false;
            std::this_thread::sleep_for(std::min(pause, deadline - now));
            pause = std::min<Clock::duration>(pause * 2, k_max_backoff);
        }
        return true;
    }

    // The watcher blocks every signal but SIGKILL, so it stays through a graceful stop.
    void signal(int number) {
        if (m_status)
            return;
        ::kill(-m_pid, number);
        // The leader too, in case it moved itself to another group.
        ::kill(m_pid, number);
    }

    // SIGKILLs what is left of the group, the leader and the watcher included, and reaps
    // both.
    void finish() {
        if (!m_status) {
            signal(SIGKILL);
            int status = 0;
            pid_t reaped;
            do
                reaped = ::waitpid(m_pid, &status, 0);
            while (reaped < 0 && errno == EINTR);
            m_status = reaped == m_pid ? status : k_lost_status;
        }
        reap_watcher();
    }

private:
    void reap_watcher() {
        if (m_watcher <= 0)
            return;
        // Not reaped yet, so the number is still the watcher's own.
        kill_and_reap(m_watcher);
        m_watcher = -1;
    }

    pid_t m_pid;
    pid_t m_watcher;
    std::optional<int> m_status; // raw wait status once reaped
};

int shell_status(int wait_status) {
    if (wait_status == k_lost_status)
        return -1;
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return -1;
}

struct Stream {
    Fd fd;
    util::TailBuffer tail;
};

// Reads what is available now; closes the stream at EOF or on a read error.
void drain(Stream& stream, std::array<char, 65536>& buffer) {
    ssize_t count = ::read(stream.fd.get(), buffer.data(), buffer.size());
    if (count > 0)
        stream.tail.append(std::string_view(buffer.data(), static_cast<size_t>(count)));
    else if (count == 0 || (errno != EAGAIN && errno != EINTR))
        stream.fd.reset();
}

} // namespace

Expected<RunResult> run(const std::vector<std::string>& argv, const RunOptions& options) {
    auto launch = RIG_TRY(prepare(argv, options.cwd, options.env));
    auto out_pipe = RIG_TRY(make_pipe());
    auto err_pipe = RIG_TRY(make_pipe());
    auto null_in = RIG_TRY(open_fd("/dev/null", O_RDONLY));
    launch.stdio = {null_in.get(), out_pipe.write.get(), err_pipe.write.get()};

    const auto deadline = deadline_after(options.timeout);
    Group group(RIG_TRY(spawn_group(launch)));
    // Our copies of the write ends would keep EOF from ever arriving.
    out_pipe.write.reset();
    err_pipe.write.reset();
    null_in.reset();

    RunResult result;
    std::array<Stream, 2> streams{
        Stream{std::move(out_pipe.read), util::TailBuffer(options.max_output)},
        Stream{std::move(err_pipe.read), util::TailBuffer(options.max_output)}};
    std::array<char, 65536> buffer;
    std::optional<Clock::time_point> stop_reading_at; // set once the child is gone
    while (streams[0].fd.valid() || streams[1].fd.valid()) {
        auto now = Clock::now();
        if (!stop_reading_at) {
            if (!group.exited() && now >= deadline)
                result.timed_out = true;
            if (result.timed_out || group.exited()) {
                group.finish();
                stop_reading_at = now + k_output_linger;
            }
        }
        auto limit = stop_reading_at.value_or(deadline);
        if (now >= limit)
            break;

        std::array<pollfd, 2> fds{};
        for (size_t i = 0; i < streams.size(); ++i)
            fds[i] = {streams[i].fd.get(), POLLIN, 0}; // poll ignores a negative fd
        auto wait = std::min<Clock::duration>(limit - now, k_poll_interval);
        auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
        if (::poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) < 0) {
            if (errno == EINTR)
                continue;
            return fail(ErrorKind::infra, "poll: " + errno_message(errno));
        }
        for (size_t i = 0; i < streams.size(); ++i) {
            if (streams[i].fd.valid() && fds[i].revents != 0)
                drain(streams[i], buffer);
        }
    }
    // Both streams reached EOF while the child may still be running.
    if (!stop_reading_at && !group.wait_until(deadline))
        result.timed_out = true;
    group.finish();

    result.out = streams[0].tail.take();
    result.err = streams[1].tail.take();
    int status = *group.wait_status();
    if (status != k_lost_status && WIFSIGNALED(status))
        result.signal = WTERMSIG(status);
    if (!result.timed_out && status != k_lost_status && WIFEXITED(status))
        result.exit_code = WEXITSTATUS(status);
    return result;
}

std::optional<std::filesystem::path> find_program(const std::string& name) {
    if (name.empty())
        return std::nullopt;
    if (name.find('/') != std::string::npos) {
        if (is_executable_file(name))
            return absolute_or_same(name);
        return std::nullopt;
    }
    std::string search_path;
    if (const char* value = std::getenv("PATH"))
        search_path = value;
    else {
        // What execvp uses when PATH is unset.
        search_path.resize(::confstr(_CS_PATH, nullptr, 0));
        ::confstr(_CS_PATH, search_path.data(), search_path.size());
        search_path.resize(std::strlen(search_path.c_str()));
    }
    size_t start = 0;
    while (start <= search_path.size()) {
        size_t end = search_path.find(':', start);
        if (end == std::string::npos)
            end = search_path.size();
        std::string dir = search_path.substr(start, end - start);
        // POSIX: an empty PATH entry means the current directory.
        std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / name;
        if (is_executable_file(candidate))
            return absolute_or_same(candidate);
        start = end + 1;
    }
    return std::nullopt;
}

// A unity build (the quickstart's: scripts/build --rig) includes this file in another,
// where GCC takes it for a header and warns that Impl holds a type of this file's own.
// Clang has no such warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
#endif
struct Child::Impl {
    explicit Impl(Spawned spawned) : group(spawned) {}
    Group group;
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

Child::Child(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

// Never leaves a zombie or an orphan: SIGKILL to the whole group, then reap.
Child::~Child() {
    m_impl->group.finish();
}

Expected<std::unique_ptr<Child>> Child::spawn(const std::vector<std::string>& argv,
                                              const SpawnOptions& options) {
    auto launch = RIG_TRY(prepare(argv, options.cwd, options.env));
    auto null_in = RIG_TRY(open_fd("/dev/null", O_RDONLY));
    const int output_flags = O_WRONLY | O_CREAT | O_TRUNC;
    auto out = RIG_TRY(options.stdout_file.empty() ? open_fd("/dev/null", O_WRONLY)
                                                   : open_fd(options.stdout_file, output_flags));
    // Sharing one open file keeps stdout and stderr interleaved in write order.
    Fd separate_err;
    if (!options.stderr_file.empty() && options.stderr_file != options.stdout_file)
        separate_err = RIG_TRY(open_fd(options.stderr_file, output_flags));
    launch.stdio = {null_in.get(), out.get(),
                    separate_err.valid() ? separate_err.get() : out.get()};
    if (!options.cpus.empty()) {
        cpu_set_t mask;
        CPU_ZERO(&mask);
        for (int cpu : options.cpus) {
            if (cpu < 0 || cpu >= CPU_SETSIZE)
                return fail(ErrorKind::infra, "cannot start " + argv[0] + " on CPU " +
                                                  std::to_string(cpu) + ": no such CPU");
            CPU_SET(cpu, &mask);
        }
        launch.affinity = mask;
    }
    Spawned spawned = RIG_TRY(spawn_group(launch));
    return std::unique_ptr<Child>(new Child(std::make_unique<Impl>(spawned)));
}

int Child::pid() const {
    return m_impl->group.pid();
}

bool Child::running() {
    if (!m_impl->group.exited())
        return true;
    m_impl->group.finish();
    return false;
}

int Child::stop(std::chrono::milliseconds grace) {
    Group& group = m_impl->group;
    if (!group.wait_status()) {
        group.signal(SIGTERM);
        group.wait_until(deadline_after(grace));
        group.finish();
    }
    return *exit_status();
}

std::optional<int> Child::wait_for(std::chrono::milliseconds timeout) {
    if (!m_impl->group.wait_until(deadline_after(timeout)))
        return std::nullopt;
    m_impl->group.finish();
    return exit_status();
}

std::optional<int> Child::exit_status() const {
    const auto& status = m_impl->group.wait_status();
    if (!status)
        return std::nullopt;
    return shell_status(*status);
}

} // namespace rig::proc
