// SPDX-License-Identifier: MIT
// Counting FUSE requests in virtiofsd's debug log.
#include "vm/virtiofsd_log.hpp"

#include "util/file.hpp"
#include "util/strings.hpp"

#include <algorithm>

namespace rig::vm {

namespace {

// include/uapi/linux/fuse.h's opcodes, as virtiofsd names them (lower-cased here).
constexpr std::string_view k_fuse_requests[] = {
    "lookup",   "forget",   "getattr",         "setattr",      "readlink",      "symlink",
    "mknod",    "mkdir",    "unlink",          "rmdir",        "rename",        "link",
    "open",     "read",     "write",           "statfs",       "release",       "fsync",
    "setxattr", "getxattr", "listxattr",       "removexattr",  "flush",         "init",
    "opendir",  "readdir",  "releasedir",      "fsyncdir",     "getlk",         "setlk",
    "setlkw",   "access",   "create",          "interrupt",    "bmap",          "destroy",
    "ioctl",    "poll",     "notify_reply",    "batch_forget", "fallocate",     "readdirplus",
    "rename2",  "lseek",    "copy_file_range", "setupmapping", "removemapping", "syncfs"};

class LogCounter {
public:
    explicit LogCounter(std::string share) : m_share(std::move(share)) {
        m_windows.add_share(m_share);
    }

    void line(std::string_view text) {
        if (size_t at = text.find("unique: "); at != std::string_view::npos) {
            if (size_t opcode = text.find(", opcode: ", at); opcode != std::string_view::npos)
                request(text.substr(opcode + 10));
        } else if (text.find("lo_lookup(") != std::string_view::npos &&
                   text.find("name=" + std::string(k_virtiofs_mark_prefix)) !=
                       std::string_view::npos) {
            mark();
        }
    }

    ProtocolCounts finish() { return m_windows.finish(); }

private:
    // "NAME (K), nodeid: ...". A name virtiofsd has no word for ("???", for an opcode the
    // guest made up) counts as "other": metric names come only from the list above.
    void request(std::string_view rest) {
        std::string name(rest.substr(0, rest.find(' ')));
        std::transform(name.begin(), name.end(), name.begin(), [](char c) {
            return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        });
        bool known = std::find(std::begin(k_fuse_requests), std::end(k_fuse_requests), name) !=
                     std::end(k_fuse_requests);
        m_windows.count(m_share, known ? name : "other");
    }

    // The mark's own LOOKUP was logged just before: it belongs to no window. A type whose
    // count falls to zero goes, as one never counted.
    void mark() {
        if (ShareCounts* counts = m_windows.open(m_share)) {
            if (auto lookups = counts->by_type.find("lookup");
                lookups != counts->by_type.end() && counts->requests > 0) {
                --counts->requests;
                if (--lookups->second == 0)
                    counts->by_type.erase(lookups);
            }
        }
        m_windows.mark();
    }

    std::string m_share;
    WindowedCounts m_windows;
};

} // namespace

ProtocolCounts count_virtiofsd_log(std::string_view log, const std::string& share) {
    LogCounter counter(share);
    util::for_each_line(log, [&](std::string_view line) { counter.line(line); });
    return counter.finish();
}

Expected<ProtocolCounts> read_virtiofsd_log(const std::filesystem::path& file,
                                            const std::string& share) {
    LogCounter counter(share);
    if (!util::for_each_file_line(file, [&](std::string_view line) { counter.line(line); }))
        return fail(ErrorKind::infra, "cannot read virtiofsd's log " + file.string());
    return counter.finish();
}

std::vector<std::string> fuse_request_names() {
    std::vector<std::string> names(std::begin(k_fuse_requests), std::end(k_fuse_requests));
    names.emplace_back("other");
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace rig::vm
