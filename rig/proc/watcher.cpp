// SPDX-License-Identifier: MIT
// The group's watcher. On x86-64 it is a process that shares rig's memory (clone with
// CLONE_VM) and makes raw system calls only; elsewhere, a forked copy of rig.
//
// Why not a fork everywhere: a fork copies the page tables of all rig has touched, and
// the copy then turns each page rig writes into a copy-on-write fault for as long as the
// watcher lives. Under the address sanitizer (rig's test build: hundreds of MB of shadow
// memory) that made every spawn cost about 15 ms of system time, and a test that runs git
// hundreds of times spent two thirds of its time in the kernel.
#include "proc/watcher.hpp"

#include "proc/spawn.hpp"

#include <cerrno>
#include <csignal>
#include <ctime>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rig::proc {

namespace {

constexpr int k_wakeup = SIGUSR1;
constexpr long k_grace_ms = 3000;
constexpr long k_poll_ms = 50;

// What the watcher needs; it lives at the top of the watcher's stack, so it outlasts the
// spawn that wrote it.
struct Orders {
    pid_t rig;
    int from_leader;
    int to_leader;
    int other_end; // the write end of from_leader, which must not stay open in the watcher
};

// The watcher's code: no sanitizer or coverage instrumentation (on x86-64 it runs beside
// rig's threads, whose shadow and bookkeeping those are), and no libc but system calls.
#if defined(__clang__)
#define RIG_UNINSTRUMENTED __attribute__((no_sanitize("address", "undefined", "coverage")))
#else
#define RIG_UNINSTRUMENTED __attribute__((no_sanitize("address", "undefined")))
#endif

#if defined(__x86_64__)
// A system call without libc: in rig's memory, errno and libc's locks are those of the
// thread that cloned the watcher. Returns -errno on failure, as the kernel does.
RIG_UNINSTRUMENTED __attribute__((always_inline)) inline long
sys(long number, long a = 0, long b = 0, long c = 0, long d = 0) {
    long result;
    register long r10 asm("r10") = d;
    asm volatile("syscall"
                 : "=a"(result)
                 : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
                 : "rcx", "r11", "memory");
    return result;
}
#else
// In a forked copy of rig, libc's wrapper is safe: errno is the copy's own.
inline long sys(long number, long a = 0, long b = 0, long c = 0, long d = 0) {
    long result = ::syscall(number, a, b, c, d);
    return result < 0 ? -errno : result;
}
#endif

// The kernel's signal set, one word on 64-bit Linux.
using KernelSigset = unsigned long;
static_assert(_NSIG / 8 == sizeof(KernelSigset));

// The leader's pid, once it has its group; end of file: it never got that far. The grace
// is measured once the watcher has left the group, so that it can tell when the rest is
// gone. Never returns.
RIG_UNINSTRUMENTED int watch_group(void* argument) {
    const Orders* orders = static_cast<const Orders*>(argument);
    KernelSigset all = ~KernelSigset{0};
    sys(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&all), 0, sizeof all);
    sys(SYS_prctl, PR_SET_PDEATHSIG, k_wakeup);
    sys(SYS_prctl, PR_SET_NAME, reinterpret_cast<long>("rig-watcher"));
    // Its own copy of the write end would keep it from ever seeing end of file.
    sys(SYS_close, orders->other_end);
    pid_t group = -1;
    if (sys(SYS_read, orders->from_leader, reinterpret_cast<long>(&group), sizeof group) !=
            sizeof group ||
        sys(SYS_setpgid, 0, group) != 0)
        sys(SYS_exit, 0);
    char joined = 1;
    sys(SYS_write, orders->to_leader, reinterpret_cast<long>(&joined), 1);
    pid_t rig = orders->rig;
    // rig's descriptors would keep pipes from reaching EOF and flocks held after rig died.
    sys(SYS_close_range, 0, ~0U, 0);
    KernelSigset wakeup = KernelSigset{1} << (k_wakeup - 1);
    // rig may have died before the prctl; a stray SIGUSR1 to the group changes nothing.
    while (sys(SYS_getppid) == rig)
        sys(SYS_rt_sigtimedwait, reinterpret_cast<long>(&wakeup), 0, 0, sizeof wakeup);
    sys(SYS_setpgid, 0, 0);
    sys(SYS_kill, -group, k_parent_died);
    timespec pause;
    pause.tv_sec = 0;
    pause.tv_nsec = k_poll_ms * 1'000'000;
    for (long waited = 0; waited < k_grace_ms && sys(SYS_kill, -group, 0) == 0; waited += k_poll_ms)
        sys(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    sys(SYS_kill, -group, SIGKILL);
    sys(SYS_exit, 0);
    return 0;
}

#undef RIG_UNINSTRUMENTED

#if defined(__x86_64__)

// Enough for watch_group's few frames; a guard page below catches more.
constexpr size_t k_stack_size = 64 * 1024;
constexpr size_t k_guard_size = 4096;

Expected<Watcher> start(const Orders& orders) {
    size_t size = k_guard_size + k_stack_size;
    void* memory = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED)
        return fail(ErrorKind::infra, "mmap of a watcher's stack: " + errno_message(errno));
    ::mprotect(memory, k_guard_size, PROT_NONE);
    auto* top = static_cast<char*>(memory) + size;
    auto* copy = reinterpret_cast<Orders*>(top - sizeof(Orders));
    *copy = orders;
    // Below the orders, 16-byte aligned as the ABI wants a stack.
    auto stack_top = (reinterpret_cast<uintptr_t>(copy) - 64) & ~uintptr_t{15};
    // SIGCHLD: reaped like any child. No CLONE_FILES: its own table of descriptors.
    pid_t pid = ::clone(watch_group, reinterpret_cast<void*>(stack_top), CLONE_VM | SIGCHLD, copy);
    if (pid < 0) {
        int error = errno;
        ::munmap(memory, size);
        return fail(ErrorKind::infra, "clone: " + errno_message(error));
    }
    return Watcher{pid, memory, size};
}

#else

// A forked copy of rig.
Expected<Watcher> start(const Orders& orders) {
    pid_t pid = ::fork();
    if (pid == 0) {
        Orders own = orders;
        watch_group(&own);
    }
    if (pid < 0)
        return fail(ErrorKind::infra, "fork: " + errno_message(errno));
    return Watcher{pid, nullptr, 0};
}

#endif

} // namespace

Expected<Watcher> spawn_watcher(pid_t rig, const Pipe& from_leader, Pipe& to_leader) {
    Watcher watcher = RIG_TRY(
        start({rig, from_leader.read.get(), to_leader.write.get(), from_leader.write.get()}));
    // The leader must see end of file, not wait forever, if the watcher dies.
    to_leader.write.reset();
    return watcher;
}

void reap_watcher(Watcher& watcher) {
    if (watcher.pid <= 0)
        return;
    // Not reaped yet, so the number is still the watcher's own.
    kill_and_reap(watcher.pid);
    watcher.pid = -1;
    // Only now: until it is reaped, the watcher may still run on it.
    if (watcher.stack)
        ::munmap(watcher.stack, watcher.stack_size);
    watcher.stack = nullptr;
}

} // namespace rig::proc
