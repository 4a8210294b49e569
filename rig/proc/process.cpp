// SPDX-License-Identifier: MIT
// Running a command to completion with its output captured through poll(), finding
// programs in PATH, and the Child a caller supervises.
#include "proc/process.hpp"

#include "proc/fd.hpp"
#include "proc/group.hpp"
#include "proc/spawn.hpp"
#include "util/tail.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <string_view>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace rig::proc {

namespace {

using namespace std::chrono_literals;

// Caps each wait so that a child which exited while a grandchild still holds its pipes
// is noticed without waiting for EOF.
constexpr auto k_poll_interval = 50ms;
// How long output is still read after the child is gone, for escapees that left its
// process group but kept its pipes.
constexpr auto k_output_linger = 250ms;

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

// The user, binds and network a child gets, as it makes them (spawn.cpp, ChildSetup).
Expected<void> confine(Launch& launch, const Confinement& confinement) {
    const std::optional<Credentials>& user = confinement.user;
    const std::vector<Bind>& binds = confinement.binds;
    if (confinement.no_network) {
        launch.new_network = true;
        if (::geteuid() != 0) {
            // Written by the child into its own maps: only its user, as itself.
            launch.uid_map =
                std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
            launch.gid_map =
                std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";
        }
    }
    if (user) {
        launch.drop_user = true;
        launch.uid = user->uid;
        launch.gid = user->gid;
        launch.groups = user->groups;
    }
    if (binds.empty())
        return {};
    if (!user)
        return fail(ErrorKind::infra, "cannot start " + launch.name +
                                          ": binds need a user to run as (they need root)");
    if (binds.size() > Launch::k_most_mounts)
        return fail(ErrorKind::infra, "cannot start " + launch.name + ": more than " +
                                          std::to_string(Launch::k_most_mounts) + " binds");
    const std::filesystem::path root = k_bind_root;
    launch.mount_root = root.string();
    launch.mount_root_options =
        confinement.writable_bind_root ? "mode=1777,size=1g" : "mode=0755,size=64k";
    for (const Bind& bind : binds) {
        if (bind.target.parent_path() != root || bind.target.filename().empty())
            return fail(ErrorKind::infra, "cannot start " + launch.name + ": bind target " +
                                              bind.target.string() + " is not in " + root.string());
        std::error_code ec;
        auto status = std::filesystem::status(bind.source, ec);
        if (ec)
            return fail(ErrorKind::infra, "cannot start " + launch.name + ": cannot bind " +
                                              bind.source.string() + ": " + ec.message());
        launch.mounts.push_back({std::filesystem::absolute(bind.source).string(),
                                 bind.target.string(), std::filesystem::is_directory(status),
                                 bind.readonly});
    }
    return {};
}

} // namespace

Expected<RunResult> run(const std::vector<std::string>& argv, const RunOptions& options) {
    auto launch = RIG_TRY(prepare(argv, options.cwd, options.env));
    auto out_pipe = RIG_TRY(make_pipe());
    auto err_pipe = RIG_TRY(make_pipe());
    auto null_in = RIG_TRY(open_fd("/dev/null", O_RDONLY));
    launch.stdio = {null_in.get(), out_pipe.write.get(), err_pipe.write.get()};
    RIG_TRY(confine(launch, options.confinement));

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

struct Child::Impl {
    explicit Impl(Spawned spawned) : group(spawned) {}
    Group group;
};

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
    RIG_TRY(confine(launch, options.confinement));
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
