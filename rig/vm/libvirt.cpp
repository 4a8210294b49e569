// SPDX-License-Identifier: MIT
// The libvirt backend: the connection, its event loop, and each domain's lifecycle.
#include "vm/libvirt.hpp"

#include "core/classify.hpp"
#include "host/account.hpp"
#include "proc/cpu.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"
#include "vm/qemu.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace rig::vm {

namespace fs = std::filesystem;

namespace {

std::string last_error() {
    const char* message = virGetLastErrorMessage();
    return message ? message : "unknown libvirt error";
}

// libvirt prints every error to stderr unless told otherwise; rig reports them itself.
void ignore_error(void*, virErrorPtr) {}

// libvirt delivers lifecycle and connection-close events only while someone runs its
// event loop: one thread for the whole process, started on first use.
class EventLoop final {
public:
    static Expected<void> ensure() {
        static EventLoop loop;
        if (!loop.m_error.empty())
            return fail(ErrorKind::infra, loop.m_error);
        return {};
    }

    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

private:
    EventLoop() {
        virSetErrorFunc(nullptr, ignore_error);
        if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0) {
            m_error = "cannot initialise libvirt's event loop: " + last_error();
            return;
        }
        // A timer wakes the loop regularly, so that it sees m_stop when rig exits.
        m_timer = virEventAddTimeout(
            200, [](int, void*) {}, nullptr, nullptr);
        m_thread = std::thread([this] {
            while (!m_stop)
                virEventRunDefaultImpl();
        });
    }
    ~EventLoop() {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
        if (m_timer >= 0)
            virEventRemoveTimeout(m_timer);
    }

    std::string m_error;
    std::atomic<bool> m_stop{false};
    int m_timer = -1;
    std::thread m_thread;
};

// One open connection; `closed` turns true when libvirt reports it gone (the daemon
// stopped, the network dropped, keepalive timed out).
class Connection final {
public:
    static Expected<std::shared_ptr<Connection>> open(const std::string& uri) {
        RIG_TRY(EventLoop::ensure());
        virConnectPtr handle = virConnectOpenAuth(uri.c_str(), virConnectAuthPtrDefault, 0);
        if (!handle)
            return fail(ErrorKind::infra, "cannot connect to libvirt at " + uri + ": " +
                                              last_error() +
                                              " (is libvirtd running? scripts/start-libvirtd)");
        auto connection = std::shared_ptr<Connection>(new Connection(handle));
        virConnectRegisterCloseCallback(handle, on_close, connection.get(), nullptr);
        // Remote hosts that vanish without closing the socket are noticed in about 15 s.
        virConnectSetKeepAlive(handle, 5, 3);
        return connection;
    }
    ~Connection() {
        virConnectUnregisterCloseCallback(m_handle, on_close);
        virConnectClose(m_handle);
    }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    virConnectPtr handle() const { return m_handle; }
    bool alive() const { return !m_closed && virConnectIsAlive(m_handle) == 1; }

private:
    explicit Connection(virConnectPtr handle) : m_handle(handle) {}
    static void on_close(virConnectPtr, int, void* opaque) {
        static_cast<Connection*>(opaque)->m_closed = true;
    }

    virConnectPtr m_handle;
    std::atomic<bool> m_closed{false};
};

// What the lifecycle events said about one domain, written by the event loop thread.
struct DomainWatch {
    std::mutex mutex;
    std::optional<int> exit_status;
    std::string reason;

    // The classifier's vocabulary, core::VmExit. The first stop wins: a panic is followed by its
    // own "stopped, crashed".
    void on_event(int event, int detail) {
        std::optional<int> status;
        std::string why;
        if (event == VIR_DOMAIN_EVENT_CRASHED) {
            status = core::exit_code(core::VmExit::panicked);
            why = detail == VIR_DOMAIN_EVENT_CRASHED_PANICKED ? "guest panicked" : "guest crashed";
        } else if (event == VIR_DOMAIN_EVENT_STOPPED) {
            switch (detail) {
            case VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN:
                status = core::exit_code(core::VmExit::powered_off), why = "guest powered off";
                break;
            case VIR_DOMAIN_EVENT_STOPPED_CRASHED:
                status = core::exit_code(core::VmExit::panicked), why = "guest crashed";
                break;
            case VIR_DOMAIN_EVENT_STOPPED_FAILED:
                status = core::exit_code(core::VmExit::hypervisor_failed), why = "QEMU failed";
                break;
            default:
                status = core::exit_code(core::VmExit::stopped_outside),
                why = "domain stopped from outside rig";
                break;
            }
        }
        if (!status)
            return;
        std::lock_guard lock(mutex);
        if (!exit_status) {
            exit_status = status;
            reason = why;
        }
    }
};

int on_lifecycle(virConnectPtr, virDomainPtr, int event, int detail, void* opaque) {
    (*static_cast<std::shared_ptr<DomainWatch>*>(opaque))->on_event(event, detail);
    return 0;
}

void free_watch(void* opaque) {
    delete static_cast<std::shared_ptr<DomainWatch>*>(opaque);
}

double seconds_from_ns(unsigned long long ns) {
    return static_cast<double>(ns) / 1e9;
}

std::vector<std::string> process_argv(const fs::path& proc_dir) {
    // read_file, not an istreambuf_iterator: a process that ends while it is read fails
    // the read with ESRCH, which the iterator would throw out of rig.
    std::string text = util::read_file(proc_dir / "cmdline");
    std::vector<std::string> argv;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\0', start);
        if (end == std::string::npos)
            end = text.size();
        argv.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return argv;
}

// Every virtiofsd process serving one of `dirs`: the daemon libvirt started and the
// sandboxed child it forked, which does the work. Both carry the same argument vector.
std::vector<int> virtiofsd_pids(const std::vector<fs::path>& dirs) {
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        auto argv = process_argv(entry.path());
        for (const fs::path& dir : dirs)
            if (libvirt_virtiofsd_serves(argv, dir)) {
                pids.push_back(std::stoi(name));
                break;
            }
    }
    return pids;
}

// Their CPU time, each process counted once by its own figure.
double virtiofsd_cpu_seconds(const std::vector<fs::path>& dirs) {
    double total = 0;
    for (int pid : virtiofsd_pids(dirs))
        total += proc::cpu_seconds(pid).value_or(0);
    return total;
}

// libvirt's cputune does not reach the virtiofsd it starts: rig pins its threads to the
// guest's set as the QEMU backend does, on a local daemon (a remote one's are out of reach).
Expected<void> pin_virtiofsd(const std::vector<fs::path>& dirs, const core::CpuSet& cpus) {
    if (cpus.empty())
        return {};
    for (int pid : virtiofsd_pids(dirs))
        RIG_TRY(proc::pin_threads(pid, cpus));
    return {};
}

class LibvirtVm final : public Vm {
public:
    LibvirtVm(std::shared_ptr<Connection> connection, virDomainPtr domain, int callback,
              std::shared_ptr<DomainWatch> watch, std::string uri, std::string xml,
              std::vector<fs::path> virtiofs_dirs, fs::path kernel_copy)
        : m_connection(std::move(connection)), m_domain(domain), m_callback(callback),
          m_watch(std::move(watch)), m_uri(std::move(uri)), m_xml(std::move(xml)),
          m_virtiofs_dirs(std::move(virtiofs_dirs)), m_kernel_copy(std::move(kernel_copy)) {}
    ~LibvirtVm() override {
        destroy();
        if (m_callback >= 0)
            virConnectDomainEventDeregisterAny(m_connection->handle(), m_callback);
        virDomainFree(m_domain);
        // QEMU read the kernel when it started; a copy per sample would add up to gigabytes
        // over a run (a vmlinux is ~65 MB). domain.xml stays as the evidence.
        std::error_code ec;
        fs::remove(m_kernel_copy, ec);
    }
    LibvirtVm(const LibvirtVm&) = delete;
    LibvirtVm& operator=(const LibvirtVm&) = delete;

    std::optional<int> poll() override {
        {
            std::lock_guard lock(m_watch->mutex);
            if (m_watch->exit_status)
                return m_watch->exit_status;
        }
        if (!m_connection->alive())
            return std::nullopt; // helper_failure() reports it
        // Events are the contract, but a domain that vanished without one must not leave
        // the sample waiting for its timeouts; give a late event a moment first.
        int state = 0, reason = 0;
        bool gone = virDomainGetState(m_domain, &state, &reason, 0) < 0
                        ? virGetLastErrorCode() == VIR_ERR_NO_DOMAIN
                        : state == VIR_DOMAIN_SHUTOFF;
        if (!gone)
            return std::nullopt;
        auto now = std::chrono::steady_clock::now();
        if (!m_gone_since)
            m_gone_since = now;
        if (now - *m_gone_since < std::chrono::seconds(2))
            return std::nullopt;
        std::lock_guard lock(m_watch->mutex);
        if (!m_watch->exit_status) {
            m_watch->exit_status = 3;
            m_watch->reason = "domain vanished without a lifecycle event";
        }
        return m_watch->exit_status;
    }

    CpuTimes cpu_times() override {
        CpuTimes times;
        // virtiofsd is a process of the host the domain runs on: measurable on this
        // machine only (m_virtiofs_dirs is empty for a remote host).
        if (!m_virtiofs_dirs.empty())
            times.helper_seconds = virtiofsd_cpu_seconds(m_virtiofs_dirs);
        // The domain's total: all of QEMU's threads, as the QEMU backend counts them.
        int count = virDomainGetCPUStats(m_domain, nullptr, 0, -1, 1, 0);
        if (count > 0) {
            std::vector<virTypedParameter> params(static_cast<size_t>(count));
            if (virDomainGetCPUStats(m_domain, params.data(), static_cast<unsigned>(count), -1, 1,
                                     0) > 0) {
                unsigned long long ns = 0;
                if (virTypedParamsGetULLong(params.data(), count, VIR_DOMAIN_CPU_STATS_CPUTIME,
                                            &ns) == 1)
                    times.vm_seconds = seconds_from_ns(ns);
                virTypedParamsClear(params.data(), count);
                if (times.vm_seconds > 0)
                    return times;
            }
        }
        // Without cgroups (containers) the same figure comes from QEMU's /proc stat.
        virDomainInfo info{};
        if (virDomainGetInfo(m_domain, &info) == 0)
            times.vm_seconds = seconds_from_ns(info.cpuTime);
        return times;
    }

    void destroy() override {
        if (m_destroyed)
            return;
        m_destroyed = true;
        bool running;
        {
            std::lock_guard lock(m_watch->mutex);
            running = !m_watch->exit_status;
        }
        if (running && m_connection->alive())
            virDomainDestroy(m_domain);
    }

    std::optional<std::string> helper_failure() override {
        {
            std::lock_guard lock(m_watch->mutex);
            if (m_watch->exit_status)
                return std::nullopt;
        }
        if (!m_connection->alive())
            return "lost the connection to libvirt at " + m_uri;
        return std::nullopt;
    }

    std::string describe() const override { return m_xml; }

private:
    std::shared_ptr<Connection> m_connection;
    virDomainPtr m_domain;
    int m_callback;
    std::shared_ptr<DomainWatch> m_watch;
    std::string m_uri;
    std::string m_xml;
    std::vector<fs::path> m_virtiofs_dirs;
    fs::path m_kernel_copy;
    bool m_destroyed = false;
    std::optional<std::chrono::steady_clock::time_point> m_gone_since;
};

// Who must be able to write the shares: the QEMU user of this machine for a local daemon;
// for a remote host, whose QEMU user's id is unknown here, everyone.
Expected<void> open_share_to_qemu(const fs::path& root, bool local) {
    auto account = local ? host::libvirt_qemu_account() : std::nullopt;
    std::string user = account ? account->name : "";
    std::error_code ec;
    auto apply = [&](const fs::path& path) -> bool {
        if (account)
            return ::lchown(path.c_str(), account->uid, account->gid) == 0;
        if (fs::is_symlink(path))
            return true;
        fs::permissions(path, fs::perms::others_read | fs::perms::others_write,
                        fs::perm_options::add, ec);
        if (!ec && fs::is_directory(path))
            fs::permissions(path, fs::perms::others_exec, fs::perm_options::add, ec);
        return !ec;
    };
    if (!apply(root))
        return fail(ErrorKind::infra,
                    "cannot hand " + root.string() + " to QEMU's user " +
                        (user.empty() ? std::string("(others)") : user) +
                        ": run rig as root, or QEMU under libvirt cannot write the share");
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (!apply(it->path()))
            return fail(ErrorKind::infra,
                        "cannot hand " + it->path().string() + " to QEMU's user " + user);
    return {};
}

std::string octal_mode(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%03o", static_cast<unsigned>(mode & 07777));
    return text;
}

// QEMU opens the kernel, the initramfs and the shares by path as its own user: every
// folder above them must let others through.
Expected<void> check_reachable_by_others(const fs::path& dir) {
    for (fs::path path = fs::absolute(dir);; path = path.parent_path()) {
        struct stat info {};
        if (::stat(path.c_str(), &info) == 0 && !(info.st_mode & S_IXOTH))
            return fail(ErrorKind::infra,
                        path.string() + " is not searchable by others (mode " +
                            octal_mode(info.st_mode) + "): QEMU under libvirt runs as " +
                            (libvirt_qemu_user().empty() ? "another user" : libvirt_qemu_user()) +
                            " and cannot reach the guest's files; keep results elsewhere "
                            "(--db) or chmod o+x " +
                            path.string());
        if (path == path.parent_path())
            return {};
    }
}

class LibvirtHypervisor final : public Hypervisor {
public:
    explicit LibvirtHypervisor(std::string uri) : m_uri(std::move(uri)) {}

    std::string name() const override { return "libvirt"; }

    Expected<std::unique_ptr<Vm>> start(const GuestSpec& requested) override {
        auto connection = RIG_TRY(connect());
        GuestSpec spec = requested;
        RIG_TRY(check_reachable_by_others(spec.runtime_dir));
        // Under qemu:///system QEMU runs as libvirt-qemu, and a root-owned 0755 share is
        // read-only to it. A session daemon's QEMU is rig's own user already.
        if (m_uri.find("/session") == std::string::npos)
            for (const Share& share : spec.shares)
                if (!share.readonly)
                    RIG_TRY(open_share_to_qemu(share.path, libvirt_uri_is_local(m_uri)));
        if (!spec.protocol_trace.empty()) {
            RIG_TRY(write_protocol_trace_events(spec.protocol_trace));
            // QEMU opens the log as its own user; made here, it is handed over like a share.
            std::ofstream(spec.protocol_trace, std::ios::trunc);
            if (m_uri.find("/session") == std::string::npos)
                RIG_TRY(open_share_to_qemu(spec.protocol_trace, libvirt_uri_is_local(m_uri)));
        }
        // The kernel cache may sit under a private home; a copy beside the initramfs is
        // reachable wherever the sample's folder is (and on shared storage, by every host).
        std::error_code ec;
        fs::path kernel = spec.runtime_dir / "kernel";
        fs::copy_file(spec.kernel, kernel, fs::copy_options::overwrite_existing, ec);
        if (ec)
            return fail(ErrorKind::infra,
                        "cannot copy " + spec.kernel.string() + " for libvirt: " + ec.message());
        spec.kernel = kernel;
        // Domain names are unique per daemon; two rigs may run the same cell on one host.
        static std::atomic<int> serial{0};
        spec.name += "-" + std::to_string(::getpid()) + "-" + std::to_string(++serial);
        std::string xml = libvirt_domain_xml(spec);
        std::ofstream(spec.runtime_dir / "domain.xml", std::ios::trunc) << xml;

        // Paused first, so that no lifecycle event can happen before rig listens.
        virDomainPtr domain =
            virDomainCreateXML(connection->handle(), xml.c_str(),
                               VIR_DOMAIN_START_PAUSED | VIR_DOMAIN_START_AUTODESTROY);
        if (!domain) {
            std::string why = last_error();
            fs::remove(kernel, ec);
            return fail(ErrorKind::infra,
                        "libvirt at " + m_uri + " could not start the guest: " + why);
        }
        auto watch = std::make_shared<DomainWatch>();
        int callback = virConnectDomainEventRegisterAny(
            connection->handle(), domain, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
            VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), new std::shared_ptr<DomainWatch>(watch),
            free_watch);
        std::vector<fs::path> virtiofs_dirs;
        if (libvirt_uri_is_local(m_uri))
            for (const Share& share : spec.shares)
                if (share.kind == ShareKind::virtiofs)
                    virtiofs_dirs.push_back(share.path);
        auto pinned = pin_virtiofsd(virtiofs_dirs, spec.host_cpus);
        auto vm = std::make_unique<LibvirtVm>(connection, domain, callback, watch, m_uri, xml,
                                              std::move(virtiofs_dirs), kernel);
        if (!pinned)
            return tl::unexpected(pinned.error());
        if (callback < 0)
            return fail(ErrorKind::infra,
                        "cannot watch the guest's lifecycle on " + m_uri + ": " + last_error());
        if (virDomainResume(domain) < 0)
            return fail(ErrorKind::infra,
                        "libvirt at " + m_uri + " could not resume the guest: " + last_error());
        return std::unique_ptr<Vm>(std::move(vm));
    }

    // The daemon's host, which may be another machine: from its capabilities.
    Expected<std::vector<core::HostCpu>> host_cpus() override {
        auto connection = RIG_TRY(connect());
        char* text = virConnectGetCapabilities(connection->handle());
        if (!text)
            return fail(ErrorKind::infra,
                        "libvirt at " + m_uri + " did not describe its host: " + last_error());
        std::string capabilities(text);
        std::free(text);
        auto cpus = libvirt_host_cpus(capabilities);
        if (cpus.empty())
            return fail(ErrorKind::infra,
                        "libvirt at " + m_uri + " described no CPUs in its host's topology");
        return cpus;
    }

    Expected<void> reachable() override {
        if (m_connection && m_connection->alive())
            return {};
        m_connection.reset();
        RIG_TRY(connect());
        return {};
    }

private:
    Expected<std::shared_ptr<Connection>> connect() {
        if (!m_connection || !m_connection->alive())
            m_connection = RIG_TRY(Connection::open(m_uri));
        return m_connection;
    }

    std::string m_uri;
    std::shared_ptr<Connection> m_connection;
};

} // namespace

bool libvirt_virtiofsd_serves(const std::vector<std::string>& argv, const fs::path& dir) {
    if (argv.empty() || fs::path(argv[0]).filename() != "virtiofsd")
        return false;
    // libvirt passes `-o source=DIR[,more]`, doubling any comma inside DIR.
    std::string source = "source=";
    for (char c : dir.string())
        source += c == ',' ? std::string(",,") : std::string(1, c);
    for (size_t i = 1; i + 1 < argv.size(); ++i)
        if (argv[i] == "-o" && (argv[i + 1] == source || argv[i + 1].rfind(source + ",", 0) == 0))
            return true;
    return false;
}

bool libvirt_uri_is_local(const std::string& uri) {
    auto scheme_end = uri.find("://");
    if (scheme_end == std::string::npos)
        return true;
    std::string rest = uri.substr(scheme_end + 3);
    return rest.empty() || rest[0] == '/';
}

std::string libvirt_qemu_user() {
    auto account = host::libvirt_qemu_account();
    return account ? account->name : "";
}

std::unique_ptr<Hypervisor> make_libvirt_hypervisor(const std::string& uri) {
    return std::make_unique<LibvirtHypervisor>(uri);
}

} // namespace rig::vm
