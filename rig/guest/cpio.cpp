// SPDX-License-Identifier: MIT
// newc cpio: a 110-byte ASCII header, the name, then the data, each padded to 4 bytes.
#include "guest/cpio.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <utility>

namespace rig::guest {

namespace {

void pad4(std::string& out) {
    while (out.size() % 4 != 0)
        out += '\0';
}

} // namespace

void CpioWriter::add_entry(std::string_view path, uint32_t mode, std::string_view data,
                           uint32_t rdev_major, uint32_t rdev_minor) {
    char header[111];
    // Fixed mtime and owner keep the archive byte-identical across builds, so its hash
    // is a cache key.
    std::snprintf(header, sizeof header,
                  "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", m_next_inode++,
                  mode, 0u, 0u, 1u, 0u, static_cast<uint32_t>(data.size()), 0u, 0u, rdev_major,
                  rdev_minor, static_cast<uint32_t>(path.size() + 1), 0u);
    m_archive.append(header, 110);
    m_archive.append(path);
    m_archive += '\0';
    pad4(m_archive);
    m_archive.append(data);
    pad4(m_archive);
}

void CpioWriter::add_directory(std::string_view path, uint32_t mode) {
    add_entry(path, S_IFDIR | mode, {});
}

void CpioWriter::add_file(std::string_view path, std::string_view data, uint32_t mode) {
    add_entry(path, S_IFREG | mode, data);
}

Expected<void> CpioWriter::add_file_from(std::string_view path, const std::filesystem::path& source,
                                         uint32_t mode) {
    std::ifstream in(source, std::ios::binary);
    if (!in)
        return fail(ErrorKind::infra, "cannot read " + source.string());
    std::ostringstream data;
    data << in.rdbuf();
    add_file(path, data.str(), mode);
    return {};
}

void CpioWriter::add_symlink(std::string_view path, std::string_view target) {
    add_entry(path, S_IFLNK | 0777, target);
}

void CpioWriter::add_char_device(std::string_view path, uint32_t major, uint32_t minor,
                                 uint32_t mode) {
    add_entry(path, S_IFCHR | mode, {}, major, minor);
}

std::string CpioWriter::finish() {
    add_entry("TRAILER!!!", 0, {});
    m_next_inode = 1;
    return std::exchange(m_archive, {});
}

} // namespace rig::guest
