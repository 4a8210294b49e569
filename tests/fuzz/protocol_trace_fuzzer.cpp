// SPDX-License-Identifier: MIT
// libFuzzer entry: any QEMU trace log, as a sample's 9p counts read it, must give counts
// within their invariants (tests/fuzz/protocol_counts.hpp), and the same counts whether
// read from text or from a file.
#include "guest/job.hpp"
#include "protocol_counts.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view log(reinterpret_cast<const char*>(data), size);
    const std::string mark = rig::guest::k_mark_tag;
    rig::vm::ProtocolCounts counts = rig::vm::count_protocol_trace(log, mark);
    rig::fuzz::check_counts(counts, mark, rig::run::ninep_count_names());
    if (int fd = rig::fuzz::memory_file(log); fd >= 0) {
        auto from_file = rig::vm::read_protocol_trace("/proc/self/fd/" + std::to_string(fd), mark);
        ::close(fd);
        rig::fuzz::check(from_file.has_value());
        rig::fuzz::check(rig::fuzz::described(*from_file) == rig::fuzz::described(counts));
    }
    return 0;
}
