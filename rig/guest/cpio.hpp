// SPDX-License-Identifier: MIT
// A writer for the "newc" cpio format the kernel unpacks as an initramfs.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace rig::guest {

class CpioWriter final {
public:
    void add_directory(std::string_view path, uint32_t mode = 0755);
    void add_file(std::string_view path, std::string_view data, uint32_t mode = 0644);
    Expected<void> add_file_from(std::string_view path, const std::filesystem::path& source,
                                 uint32_t mode);
    void add_symlink(std::string_view path, std::string_view target);
    // The kernel needs /dev/console before init runs to give it stdin/stdout.
    void add_char_device(std::string_view path, uint32_t major, uint32_t minor,
                         uint32_t mode = 0600);
    // Appends the trailer and returns the archive; the writer is empty afterwards.
    std::string finish();

private:
    void add_entry(std::string_view path, uint32_t mode, std::string_view data,
                   uint32_t rdev_major = 0, uint32_t rdev_minor = 0);

    std::string m_archive;
    uint32_t m_next_inode = 1;
};

} // namespace rig::guest
