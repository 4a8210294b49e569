// SPDX-License-Identifier: MIT
// libFuzzer entry: any virtiofsd debug log, as a sample's virtiofs counts read it, must
// give counts within their invariants (tests/fuzz/protocol_counts.hpp), of FUSE's request
// names only, and the same counts whether read from text or from a file.
#include "guest/job.hpp"
#include "protocol_counts.hpp"
#include "vm/virtiofsd_log.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view log(reinterpret_cast<const char*>(data), size);
    const std::string share = rig::guest::k_work_tag;
    static const std::vector<std::string> k_names = rig::vm::fuse_request_names();
    rig::vm::ProtocolCounts counts = rig::vm::count_virtiofsd_log(log, share);
    rig::fuzz::check_counts(counts, "", rig::run::virtiofs_count_names());
    rig::fuzz::check(counts.shares == std::set<std::string>{share});
    for (const auto& window : counts.windows)
        for (const auto& [name, share_counts] : window)
            for (const auto& [type, number] : share_counts.by_type)
                rig::fuzz::check(std::binary_search(k_names.begin(), k_names.end(), type));
    if (int fd = rig::fuzz::memory_file(log); fd >= 0) {
        auto from_file = rig::vm::read_virtiofsd_log("/proc/self/fd/" + std::to_string(fd), share);
        ::close(fd);
        rig::fuzz::check(from_file.has_value());
        rig::fuzz::check(rig::fuzz::described(*from_file) == rig::fuzz::described(counts));
    }
    return 0;
}
