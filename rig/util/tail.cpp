// SPDX-License-Identifier: MIT
// The tail buffer, trimmed lazily.
#include "util/tail.hpp"

namespace rig::util {

void TailBuffer::append(std::string_view bytes) {
    if (bytes.size() >= m_capacity) {
        m_text.assign(bytes.substr(bytes.size() - m_capacity));
        return;
    }
    if (m_text.size() + bytes.size() > 2 * m_capacity)
        m_text.erase(0, m_text.size() + bytes.size() - m_capacity);
    else if (m_text.size() + bytes.size() > m_capacity && m_text.capacity() < 2 * m_capacity)
        m_text.reserve(2 * m_capacity);
    m_text.append(bytes);
}

const std::string& TailBuffer::text() const {
    if (m_text.size() > m_capacity)
        m_text.erase(0, m_text.size() - m_capacity);
    return m_text;
}

std::string TailBuffer::take() {
    text();
    return std::move(m_text);
}

} // namespace rig::util
