// SPDX-License-Identifier: MIT
// What the request-log fuzzers check of any ProtocolCounts a reader returns, and the same
// log read from a file (a memfd) as a sample reads it.
#pragma once

#include "guest/protocol.hpp"
#include "run/protocol_metrics.hpp"
#include "vm/protocol_trace.hpp"

#include <cmath>
#include <numeric>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>

namespace rig::fuzz {

inline void check(bool holds) {
    if (!holds)
        __builtin_trap();
}

// Everything the counts hold, as text, so that two readings compare.
inline std::string described(const vm::ProtocolCounts& counts) {
    std::ostringstream out;
    out << counts.marks << '\n';
    for (const auto& share : counts.shares)
        out << share << '\n';
    for (const auto& window : counts.windows) {
        out << "window\n";
        for (const auto& [share, share_counts] : window) {
            out << share << ' ' << share_counts.requests << ' ' << share_counts.read_bytes << ' '
                << share_counts.write_bytes << '\n';
            for (const auto& [type, number] : share_counts.by_type)
                out << ' ' << type << ' ' << number << '\n';
        }
    }
    return out.str();
}

// Windows follow marks, a window's share is an attached one, its requests are the sum of
// its types (none of them zero), and the metrics a sample would store from them are
// tokens with finite values.
inline void check_counts(const vm::ProtocolCounts& counts, std::string_view mark_share,
                         const run::CountNames& names) {
    check(counts.marks >= 0);
    check(counts.windows.size() == static_cast<size_t>(counts.marks > 0 ? counts.marks - 1 : 0));
    check(counts.shares.count(std::string(mark_share)) == 0);
    for (const auto& window : counts.windows)
        for (const auto& [share, share_counts] : window) {
            check(counts.shares.count(share) == 1);
            uint64_t sum = 0;
            for (const auto& [type, number] : share_counts.by_type) {
                check(number > 0);
                sum += number;
            }
            check(sum == share_counts.requests);
        }
    // One phase per window, so that every window becomes metrics.
    std::vector<std::string> phases;
    for (size_t i = 0; i < counts.windows.size(); ++i)
        phases.push_back("phase" + std::to_string(i));
    for (const core::Metric& metric : run::protocol_metrics(counts, phases, names))
        check(guest::is_token(metric.name) && guest::is_token(metric.unit) &&
              std::isfinite(metric.value) && metric.value >= 0);
}

// `bytes` as a file at /proc/self/fd/N, for the readers' file entry; -1 when memfd fails.
inline int memory_file(std::string_view bytes) {
    int fd = ::memfd_create("fuzz-log", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t written = 0;
    while (written < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n <= 0) {
            ::close(fd);
            return -1;
        }
        written += static_cast<size_t>(n);
    }
    return fd;
}

} // namespace rig::fuzz
