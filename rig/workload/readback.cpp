// SPDX-License-Identifier: MIT
// The readback workload's files, written alike by the host here and by awk in the guest.
#include "workload/readback.hpp"

#include "util/file.hpp"
#include "util/hash.hpp"

#include <cstdio>

namespace rig::workload {

namespace fs = std::filesystem;

namespace {

// "g-0003": four digits hold the most files a scenario may ask for (spec: 1000).
std::string file_name(char side, int index) {
    char name[16];
    std::snprintf(name, sizeof name, "%c-%04d", side, index);
    return name;
}

// Each line is "rig readback NAME OFFSET\n", the offset in 16 digits: all lines of a file
// are as long, so the guest's awk needs only their count.
uint64_t line_bytes(const std::string& name) {
    return std::string("rig readback ").size() + name.size() + 1 + 16 + 1;
}

uint64_t line_count(const std::string& name, uint64_t bytes) {
    return (bytes + line_bytes(name) - 1) / line_bytes(name);
}

} // namespace

std::string readback_content(const std::string& name, uint64_t bytes) {
    const uint64_t lines = line_count(name, bytes), length = line_bytes(name);
    std::string text;
    text.reserve(lines * length);
    char line[64];
    for (uint64_t i = 0; i < lines; ++i) {
        std::snprintf(line, sizeof line, "rig readback %s %016llu\n", name.c_str(),
                      static_cast<unsigned long long>(i * length));
        text += line;
    }
    return text;
}

std::map<std::string, std::string> readback_expected(const core::ReadbackParams& params) {
    std::map<std::string, std::string> expected;
    for (char side : {'g', 'h'})
        for (int i = 0; i < params.files; ++i) {
            const std::string name = file_name(side, i);
            expected[std::string(k_readback_folder) + "/" + name] =
                util::sha256_hex(readback_content(name, params.bytes));
        }
    return expected;
}

Expected<void> write_readback_files(const fs::path& share, const core::ReadbackParams& params) {
    const fs::path folder = share / k_readback_folder;
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + folder.string() + ": " + ec.message());
    for (int i = 0; i < params.files; ++i) {
        const std::string name = file_name('h', i);
        RIG_TRY(util::write_file_atomically(folder / name, readback_content(name, params.bytes),
                                            util::Sync::skip));
    }
    return {};
}

std::string readback_command(const core::ReadbackParams& params) {
    const std::string name = file_name('g', 0);
    // The same lines as readback_content: the offset of line j is j times their length.
    return "mkdir -p " + std::string(k_readback_folder) +
           "\nawk -v files=" + std::to_string(params.files) +
           " -v lines=" + std::to_string(line_count(name, params.bytes)) +
           " -v step=" + std::to_string(line_bytes(name)) +
           " 'BEGIN { for (i = 0; i < files; i++) {\n"
           "    name = sprintf(\"g-%04d\", i); f = \"" +
           k_readback_folder +
           "/\" name\n"
           "    for (j = 0; j < lines; j++) printf \"rig readback %s %016d\\n\", name, j * "
           "step > f\n"
           "    close(f) } }'\n"
           "cat " +
           k_readback_folder + "/* > /dev/null\n";
}

} // namespace rig::workload
