// SPDX-License-Identifier: MIT
// The host's TSC rate.
#include "host/tsc.hpp"

#include "util/strings.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>
#include <time.h>

namespace rig::host {

namespace {

#if defined(__x86_64__)
uint64_t raw_ns() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC_RAW, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<uint64_t>(now.tv_nsec);
}

// TSC ticks over 50 ms of the raw clock, in kHz. Each end reads the clock between two TSC
// reads and takes the pair that were closest, so a preemption between them costs nothing.
uint64_t measure_khz() {
    auto mark = [] {
        uint64_t best_ticks = 0, best_ns = 0, best_gap = UINT64_MAX;
        for (int i = 0; i < 5; ++i) {
            uint64_t before = __builtin_ia32_rdtsc();
            uint64_t ns = raw_ns();
            uint64_t after = __builtin_ia32_rdtsc();
            if (after - before < best_gap) {
                best_gap = after - before;
                best_ticks = before + (after - before) / 2;
                best_ns = ns;
            }
        }
        return std::pair{best_ticks, best_ns};
    };
    auto [ticks0, ns0] = mark();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto [ticks1, ns1] = mark();
    if (ns1 <= ns0)
        return 0;
    return static_cast<uint64_t>(
        std::llround(static_cast<double>(ticks1 - ticks0) * 1e6 / static_cast<double>(ns1 - ns0)));
}
#endif

} // namespace

bool steady_tsc(const std::string& cpuinfo) {
    std::istringstream in(cpuinfo);
    for (std::string line; std::getline(in, line);) {
        if (!util::starts_with(line, "flags"))
            continue;
        const size_t colon = line.find(':');
        std::istringstream words(colon == std::string::npos ? "" : line.substr(colon + 1));
        bool constant = false, nonstop = false;
        for (std::string word; words >> word;) {
            constant = constant || word == "constant_tsc";
            nonstop = nonstop || word == "nonstop_tsc";
        }
        return constant && nonstop;
    }
    return false;
}

std::optional<uint64_t> tsc_khz() {
#if defined(__x86_64__)
    static const std::optional<uint64_t> measured = []() -> std::optional<uint64_t> {
        std::ifstream in("/proc/cpuinfo");
        std::stringstream text;
        text << in.rdbuf();
        if (!steady_tsc(text.str()))
            return std::nullopt;
        uint64_t khz = measure_khz();
        return khz > 0 ? std::optional(khz) : std::nullopt;
    }();
    return measured;
#else
    return std::nullopt;
#endif
}

} // namespace rig::host
