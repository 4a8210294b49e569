// SPDX-License-Identifier: MIT
// Parsing /proc/PID/stat and /proc/stat into seconds.
#include "proc/cpu.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sched.h>
#include <sstream>
#include <string>
#include <string_view>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace rig::proc {

namespace {

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        return std::nullopt;
    return text.str();
}

double ticks_per_second() {
    static const long ticks = ::sysconf(_SC_CLK_TCK);
    return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

// Splits off the next space-separated number; false when there is none. Signed, because
// some /proc/PID/stat fields are (tpgid is -1 without a terminal).
bool next_number(std::string_view& text, long long& value) {
    size_t start = text.find_first_not_of(' ');
    if (start == std::string_view::npos)
        return false;
    text.remove_prefix(start);
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc())
        return false;
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    return true;
}

} // namespace

namespace {

struct StatLine {
    long long ppid = 0;
    double seconds = 0;
};

std::optional<StatLine> read_stat(const std::string& pid) {
    auto text = read_file("/proc/" + pid + "/stat");
    if (!text)
        return std::nullopt;
    // The command name (field 2) may hold spaces and parentheses; it ends at the last ')'.
    size_t name_end = text->rfind(')');
    if (name_end == std::string::npos)
        return std::nullopt;
    std::string_view rest(*text);
    rest.remove_prefix(name_end + 1);
    // Field 3 is the one-letter state; ppid is field 4, utime and stime are 14 and 15.
    size_t state = rest.find_first_not_of(' ');
    if (state == std::string_view::npos)
        return std::nullopt;
    rest.remove_prefix(state + 1);
    StatLine line;
    long long value = 0;
    for (int field = 4; field < 14; ++field) {
        if (!next_number(rest, value))
            return std::nullopt;
        if (field == 4)
            line.ppid = value;
    }
    long long user = 0;
    long long system = 0;
    if (!next_number(rest, user) || !next_number(rest, system))
        return std::nullopt;
    line.seconds = static_cast<double>(user + system) / ticks_per_second();
    return line;
}

} // namespace

namespace {

// The process's CPU clock: the kernel's own sum over its threads, the exited ones too, in
// nanoseconds. /proc/PID/stat counts whole clock ticks (10 ms), so a helper that served a
// short sample could read 0.
std::optional<double> cpu_clock_seconds(pid_t pid) {
    // No pid exceeds the kernel's limit of 2^22; the clock id's encoding of a larger one
    // overflows into another clock (0x7fffffff into this process's own).
    constexpr pid_t k_pid_max_limit = 1 << 22;
    if (pid <= 0 || pid > k_pid_max_limit)
        return std::nullopt;
    clockid_t clock;
    timespec now{};
    if (::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &now) != 0)
        return std::nullopt;
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

} // namespace

std::optional<double> cpu_seconds(int pid) {
    if (pid <= 0)
        return std::nullopt;
    if (auto seconds = cpu_clock_seconds(pid))
        return seconds;
    auto line = read_stat(std::to_string(pid));
    if (!line)
        return std::nullopt;
    return line->seconds;
}

std::optional<double> tree_cpu_seconds(int pid) {
    auto own = cpu_seconds(pid);
    if (!own)
        return std::nullopt;
    std::map<long long, std::vector<std::pair<long long, double>>> children;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        if (auto line = read_stat(name))
            children[line->ppid].emplace_back(std::stoll(name), line->seconds);
    }
    double total = *own;
    std::vector<long long> pending{pid};
    while (!pending.empty()) {
        long long parent = pending.back();
        pending.pop_back();
        for (const auto& [child, ticked] : children[parent]) {
            total += cpu_clock_seconds(static_cast<pid_t>(child)).value_or(ticked);
            pending.push_back(child);
        }
    }
    return total;
}

namespace {

// One line of /proc/stat after its name: user nice system idle iowait irq softirq steal;
// guest and guest_nice that follow are already counted in user and nice.
std::optional<HostCpu> parse_cpu_line(std::string_view line) {
    std::array<long long, 8> ticks{};
    for (auto& value : ticks) {
        if (!next_number(line, value))
            return std::nullopt;
    }
    long long idle = ticks[3] + ticks[4];
    long long total = 0;
    for (auto value : ticks)
        total += value;
    return HostCpu{static_cast<double>(total - idle) / ticks_per_second(),
                   static_cast<double>(total) / ticks_per_second()};
}

} // namespace

std::optional<HostCpu> host_cpu(const std::vector<int>& cpus) {
    auto text = read_file("/proc/stat");
    if (!text || text->rfind("cpu ", 0) != 0)
        return std::nullopt;
    std::string_view rest(*text);
    if (cpus.empty())
        return parse_cpu_line(rest.substr(4, rest.find('\n') - 4));
    HostCpu sum;
    size_t found = 0;
    while (!rest.empty()) {
        std::string_view line = rest.substr(0, rest.find('\n'));
        rest.remove_prefix(std::min(rest.size(), line.size() + 1));
        int cpu = -1;
        if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] == ' ')
            continue;
        auto [end, error] = std::from_chars(line.data() + 3, line.data() + line.size(), cpu);
        if (error != std::errc() || std::find(cpus.begin(), cpus.end(), cpu) == cpus.end())
            continue;
        auto times = parse_cpu_line(line.substr(static_cast<size_t>(end - line.data())));
        if (!times)
            return std::nullopt;
        sum.busy_seconds += times->busy_seconds;
        sum.total_seconds += times->total_seconds;
        ++found;
    }
    if (found != cpus.size())
        return std::nullopt;
    return sum;
}

Expected<void> pin_threads(int pid, const std::vector<int>& cpus) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (int cpu : cpus)
        if (cpu >= 0 && cpu < CPU_SETSIZE)
            CPU_SET(cpu, &mask);
    std::error_code ec;
    std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& entry : std::filesystem::directory_iterator(tasks, ec)) {
        int tid = std::atoi(entry.path().filename().c_str());
        // A thread that ended meanwhile has nothing left to pin.
        if (::sched_setaffinity(tid, sizeof(mask), &mask) != 0 && errno != ESRCH)
            return fail(ErrorKind::infra, "cannot pin thread " + std::to_string(tid) + " of " +
                                              std::to_string(pid) + ": " + std::strerror(errno));
    }
    return {};
}

} // namespace rig::proc
