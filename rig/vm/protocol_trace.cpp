// SPDX-License-Identifier: MIT
// Counting 9p requests in QEMU's trace log.
#include "vm/protocol_trace.hpp"

#include "util/file.hpp"
#include "util/strings.hpp"

#include <charconv>
#include <optional>
#include <unordered_map>

namespace rig::vm {

namespace {

// QEMU 7.2's 9p request events (hw/9pfs/trace-events), without their *_return twins: a
// request is counted once, when it arrives.
constexpr std::string_view k_request_events[] = {
    "v9fs_version", "v9fs_attach",  "v9fs_stat",      "v9fs_getattr",     "v9fs_walk",
    "v9fs_open",    "v9fs_lcreate", "v9fs_fsync",     "v9fs_clunk",       "v9fs_read",
    "v9fs_readdir", "v9fs_write",   "v9fs_create",    "v9fs_symlink",     "v9fs_flush",
    "v9fs_link",    "v9fs_remove",  "v9fs_wstat",     "v9fs_mknod",       "v9fs_lock",
    "v9fs_getlock", "v9fs_mkdir",   "v9fs_xattrwalk", "v9fs_xattrcreate", "v9fs_readlink",
    "v9fs_setattr"};

constexpr int k_type_read = 116;
constexpr int k_type_walk = 110;
constexpr int k_type_write = 118;
// size[4] type[1] tag[2] count[4]: what an Rread carries besides its data.
constexpr uint64_t k_rread_header = 11;

// "name VALUE" inside an event's text: the token after " name ".
std::optional<std::string_view> field(std::string_view text, std::string_view name) {
    std::string key = " " + std::string(name) + " ";
    size_t at = text.find(key);
    if (at == std::string_view::npos)
        return std::nullopt;
    std::string_view rest = text.substr(at + key.size());
    return rest.substr(0, rest.find(' '));
}

std::optional<uint64_t> number_field(std::string_view text, std::string_view name) {
    auto token = field(text, name);
    uint64_t value = 0;
    if (!token ||
        std::from_chars(token->data(), token->data() + token->size(), value).ec != std::errc())
        return std::nullopt;
    return value;
}

// Strips the "PID@SECONDS.MICROS:" prefix QEMU adds under `-msg timestamp=on` (libvirt
// passes it).
std::string_view without_timestamp(std::string_view line) {
    size_t at = line.find('@');
    size_t colon = line.find(':');
    if (at == std::string_view::npos || colon == std::string_view::npos || at > colon)
        return line;
    for (char c : line.substr(0, at))
        if (c < '0' || c > '9')
            return line;
    return line.substr(colon + 1);
}

// A share's name becomes part of metric names ("9p.work.walk"), and the guest chooses the
// aname it attaches with: one that is not a short plain word names no share, so its
// requests are not counted.
bool is_share_name(std::string_view aname) {
    constexpr size_t k_max_share_name = 64;
    if (aname.empty() || aname.size() > k_max_share_name)
        return false;
    for (char c : aname)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    return true;
}

bool is_request_event(std::string_view name) {
    for (std::string_view event : k_request_events)
        if (event == name)
            return true;
    return false;
}

class TraceCounter {
public:
    explicit TraceCounter(std::string_view mark_aname) : m_mark_aname(mark_aname) {}

    void line(std::string_view text) {
        text = without_timestamp(text);
        size_t space = text.find(' ');
        if (space == std::string_view::npos)
            return;
        std::string_view event = text.substr(0, space);
        std::string_view rest = text.substr(space);
        if (event == "virtqueue_pop")
            pop(rest);
        else if (event == "virtqueue_fill")
            fill(rest);
        else if (is_request_event(event))
            request(rest);
    }

    ProtocolCounts finish() {
        close_pop();
        return m_windows.finish();
    }

private:
    struct Pending {
        std::string vq;
        std::string elem;
    };

    void pop(std::string_view rest) {
        close_pop();
        auto vq = field(rest, "vq");
        auto elem = field(rest, "elem");
        if (vq && elem)
            m_pending = Pending{std::string(*vq), std::string(*elem)};
    }

    // A pop that no request line followed: a type QEMU does not trace, on a 9p queue.
    void close_pop() {
        if (!m_pending)
            return;
        if (auto share = m_share_of.find(m_pending->vq);
            share != m_share_of.end() && share->second != m_mark_aname)
            m_windows.count(share->second, "other");
        m_pending.reset();
    }

    void request(std::string_view rest) {
        if (!m_pending)
            return;
        Pending popped = std::move(*m_pending);
        m_pending.reset();
        auto id = number_field(rest, "id");
        if (!id)
            return;
        if (auto aname = field(rest, "aname");
            aname && is_share_name(*aname) && !m_share_of.count(popped.vq)) {
            m_share_of[popped.vq] = std::string(*aname);
            if (*aname != m_mark_aname)
                m_windows.add_share(std::string(*aname));
        }
        auto share = m_share_of.find(popped.vq);
        if (share == m_share_of.end())
            return; // version, before the attach that names the share
        if (share->second == m_mark_aname) {
            if (*id == k_type_walk)
                m_windows.mark();
            return;
        }
        ShareCounts* counts =
            m_windows.count(share->second, ninep_type_name(static_cast<int>(*id)));
        if (!counts)
            return;
        if (*id == k_type_read)
            m_reads[popped.elem] = share->second;
        else if (auto written = number_field(rest, "count"); written && *id == k_type_write)
            counts->write_bytes += *written;
    }

    void fill(std::string_view rest) {
        auto elem = field(rest, "elem");
        auto length = number_field(rest, "len");
        if (!elem || !length)
            return;
        auto read = m_reads.find(std::string(*elem));
        if (read == m_reads.end())
            return;
        if (ShareCounts* counts = m_windows.open(read->second); counts && *length > k_rread_header)
            counts->read_bytes += *length - k_rread_header;
        m_reads.erase(read);
    }

    std::string m_mark_aname;
    WindowedCounts m_windows;
    std::optional<Pending> m_pending;
    std::unordered_map<std::string, std::string> m_share_of; // vq -> aname
    std::unordered_map<std::string, std::string> m_reads;    // elem of a read -> its share
};

} // namespace

ShareCounts* WindowedCounts::open(const std::string& share) {
    return m_counts.marks == 0 ? nullptr : &m_open[share];
}

ShareCounts* WindowedCounts::count(const std::string& share, const std::string& type) {
    ShareCounts* counts = open(share);
    if (counts) {
        ++counts->requests;
        ++counts->by_type[type];
    }
    return counts;
}

void WindowedCounts::mark() {
    if (m_counts.marks > 0)
        m_counts.windows.push_back(std::move(m_open));
    m_open = {};
    ++m_counts.marks;
}

std::string protocol_trace_events() {
    std::string text = "virtqueue_pop\nvirtqueue_fill\n";
    for (std::string_view event : k_request_events)
        text += std::string(event) + "\n";
    return text;
}

namespace {

// 9P2000.L and the 9P2000 messages Linux still sends (include/net/9p/9p.h).
const std::map<int, std::string> k_type_names{
    {8, "statfs"},       {12, "lopen"},    {14, "lcreate"},  {16, "symlink"},  {18, "mknod"},
    {20, "rename"},      {22, "readlink"}, {24, "getattr"},  {26, "setattr"},  {30, "xattrwalk"},
    {32, "xattrcreate"}, {40, "readdir"},  {50, "fsync"},    {52, "lock"},     {54, "getlock"},
    {70, "link"},        {72, "mkdir"},    {74, "renameat"}, {76, "unlinkat"}, {100, "version"},
    {102, "auth"},       {104, "attach"},  {108, "flush"},   {110, "walk"},    {112, "open"},
    {114, "create"},     {116, "read"},    {118, "write"},   {120, "clunk"},   {122, "remove"},
    {124, "stat"},       {126, "wstat"}};

} // namespace

std::string ninep_type_name(int id) {
    auto name = k_type_names.find(id);
    return name != k_type_names.end() ? name->second : "type-" + std::to_string(id);
}

std::vector<std::string> ninep_type_names() {
    std::set<std::string> names{"other"};
    for (const auto& [id, name] : k_type_names)
        names.insert(name);
    return {names.begin(), names.end()};
}

ProtocolCounts count_protocol_trace(std::string_view log, std::string_view mark_aname) {
    TraceCounter counter(mark_aname);
    util::for_each_line(log, [&](std::string_view line) { counter.line(line); });
    return counter.finish();
}

// Line by line: a long compile's log runs to tens of megabytes.
Expected<ProtocolCounts> read_protocol_trace(const std::filesystem::path& file,
                                             std::string_view mark_aname) {
    TraceCounter counter(mark_aname);
    if (!util::for_each_file_line(file, [&](std::string_view line) { counter.line(line); }))
        return fail(ErrorKind::infra, "cannot read the 9p trace " + file.string());
    return counter.finish();
}

} // namespace rig::vm
