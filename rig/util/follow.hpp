// SPDX-License-Identifier: MIT
// Reads what a growing log file gained since the last look, as `tail -f` would, and splits
// it into lines.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace rig::util {

class FileFollower final {
public:
    explicit FileFollower(std::filesystem::path path) : m_path(std::move(path)) {}
    ~FileFollower();
    FileFollower(const FileFollower&) = delete;
    FileFollower& operator=(const FileFollower&) = delete;

    // New bytes, at most `limit` per call; "" when the file does not exist yet.
    std::string read_new(size_t limit = 1 << 20);
    size_t offset() const { return m_offset; }

private:
    std::filesystem::path m_path;
    int m_fd = -1;
    size_t m_offset = 0;
};

// Splits a stream into lines, dropping the rest of any line longer than `max_line`.
class LineSplitter final {
public:
    explicit LineSplitter(size_t max_line = 4096) : m_max_line(max_line) {}
    template <typename F> void feed(std::string_view bytes, F&& on_line) {
        for (char c : bytes) {
            if (c == '\n') {
                on_line(std::string_view(m_partial));
                m_partial.clear();
            } else if (m_partial.size() < m_max_line) {
                m_partial += c;
            }
        }
    }

private:
    size_t m_max_line;
    std::string m_partial;
};

} // namespace rig::util
