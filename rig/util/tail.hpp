// SPDX-License-Identifier: MIT
// The last bytes of a stream: a process's output past its limit, a guest's console for
// evidence.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rig::util {

class TailBuffer final {
public:
    explicit TailBuffer(size_t capacity) : m_capacity(capacity) {}
    void append(std::string_view bytes);
    // The last `capacity` bytes appended.
    const std::string& text() const;
    std::string take();

private:
    size_t m_capacity;
    // Up to twice the capacity between reads, so that each byte is moved O(1) times on
    // average; reserved once when the stream proves long, never regrown.
    mutable std::string m_text;
};

} // namespace rig::util
