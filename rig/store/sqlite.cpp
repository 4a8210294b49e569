// SPDX-License-Identifier: MIT
// The SQLite connection's error text and its wait for another process's write lock.
#include "store/sqlite.hpp"

#include "util/json.hpp"
#include "util/lock.hpp"

#include <algorithm>
#include <thread>

namespace rig::store {

std::string id_array(const std::vector<int64_t>& ids) {
    return util::json_line(util::Json(ids));
}

bool parse_word(std::string_view text, core::Outcome& out) {
    auto parsed = core::parse_outcome(text);
    if (parsed)
        out = *parsed;
    return parsed.has_value();
}

bool parse_word(std::string_view text, core::Figure& out) {
    auto parsed = core::parse_figure(text);
    if (parsed)
        out = *parsed;
    return parsed.has_value();
}

bool parse_word(std::string_view text, core::KernelSource& out) {
    for (auto source :
         {core::KernelSource::debian, core::KernelSource::image, core::KernelSource::git})
        if (core::to_string(source) == text) {
            out = source;
            return true;
        }
    return false;
}

bool parse_word(std::string_view text, core::Severity& out) {
    out = core::parse_severity(text).value_or(core::Severity::error);
    return true;
}

std::string statement_summary(std::string_view sql) {
    std::string out;
    for (char c : sql) {
        bool space = c == ' ' || c == '\n' || c == '\t';
        if (space && (out.empty() || out.back() == ' '))
            continue;
        out += space ? ' ' : c;
    }
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    constexpr size_t k_max = 120;
    if (out.size() > k_max)
        out = out.substr(0, k_max) + "...";
    return out;
}

namespace {

// In WAL mode the write lock is a POSIX lock on byte 120 of the -shm file
// (WAL_WRITE_LOCK, https://sqlite.org/walformat.html).
constexpr uint64_t k_wal_write_lock_byte = 120;

// "process 1234 (sqlite3)", or "another process" when the holder cannot be named.
std::string describe_holder(const std::filesystem::path& db) {
    auto holder = util::write_lock_holder(db.string() + "-shm", k_wal_write_lock_byte);
    if (!holder)
        return "another process";
    return "process " + std::to_string(holder->pid) +
           (holder->name.empty() ? "" : " (" + holder->name + ")");
}

std::string whole_seconds(Clock::duration duration) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) +
           " s";
}

} // namespace

bool Database::Impl::keep_waiting(int attempts) {
    const LockWait& wait = *m_lock_wait;
    auto now = Clock::now();
    if (attempts == 0) {
        m_busy_since = now;
        m_next_notice = now + wait.patience;
        m_busy_stopped = false;
    }
    if (wait.stop && *wait.stop) {
        m_busy_stopped = true;
        return false;
    }
    if (now >= m_next_notice && wait.notice) {
        wait.notice("database " + m_path.string() + ": " + describe_holder(m_path) +
                    " has held its write lock for " + whole_seconds(now - m_busy_since) +
                    "; waiting until it lets go");
        m_next_notice = now + wait.reminder;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5 * (attempts + 1), 100)));
    return true;
}

} // namespace rig::store
