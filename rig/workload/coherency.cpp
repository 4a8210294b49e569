// SPDX-License-Identifier: MIT
// The coherency probe's files and the host's changes to them.
#include "workload/coherency.hpp"

#include "util/fd.hpp"
#include "util/file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rig::workload {

namespace fs = std::filesystem;

namespace {

std::string file_name(size_t index) {
    char name[16];
    std::snprintf(name, sizeof name, "c-%04zu", index + 1);
    return name;
}

tl::unexpected<Error> failed(const std::string& what, const std::string& name) {
    return fail(ErrorKind::infra, "coherency: cannot " + what + " " + k_coherency_folder + "/" +
                                      name + ": " + std::strerror(errno));
}

// Writes all of `text` at `offset`, or appends it when offset is negative.
bool write_all(int fd, const std::string& text, off_t offset) {
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = offset < 0 ? ::write(fd, text.data() + done, text.size() - done)
                               : ::pwrite(fd, text.data() + done, text.size() - done,
                                          offset + static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

} // namespace

std::vector<CoherencyFile> coherency_files(const core::Workload& workload) {
    std::vector<CoherencyFile> files;
    if (!workload.coherency.enabled())
        return files;
    for (const std::string& check : core::checks(workload))
        for (core::Change change : workload.coherency.changes)
            files.push_back({file_name(files.size()), change, check});
    return files;
}

std::string coherency_plan(const core::Workload& workload) {
    std::string plan;
    for (const CoherencyFile& file : coherency_files(workload)) {
        plan += (plan.empty() ? "" : " ") + file.name + ":" + std::string(to_string(file.change));
        if (!file.check.empty())
            plan += ":" + file.check;
    }
    return plan;
}

std::string coherency_content(const std::string& name, int version) {
    return "rig coherency " + name + " " + std::to_string(version) + "\n";
}

Expected<void> write_coherency_files(const fs::path& share, const core::Workload& workload) {
    const fs::path folder = share / k_coherency_folder;
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + folder.string() + ": " + ec.message());
    for (const CoherencyFile& file : coherency_files(workload))
        RIG_TRY(util::write_file_atomically(folder / file.name, coherency_content(file.name, 1),
                                            util::Sync::skip));
    return {};
}

Expected<void> apply_change(const fs::path& share, const CoherencyFile& file) {
    util::Fd folder(::open((share / k_coherency_folder).c_str(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!folder.valid())
        return failed("open the folder of", file.name);
    const char* name = file.name.c_str();
    switch (file.change) {
    case core::Change::rewrite:
    case core::Change::append: {
        const bool append = file.change == core::Change::append;
        util::Fd fd(
            ::openat(folder.get(), name,
                     O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (append ? O_APPEND : 0)));
        struct stat st {};
        if (!fd.valid() || ::fstat(fd.get(), &st) != 0)
            return failed("open", file.name);
        if (!S_ISREG(st.st_mode)) {
            errno = EINVAL;
            return failed("change a file that is no longer regular:", file.name);
        }
        if (!write_all(fd.get(), coherency_content(file.name, 2), append ? -1 : 0))
            return failed("write", file.name);
        return {};
    }
    case core::Change::rename:
        if (::renameat(folder.get(), name, folder.get(), (file.name + ".moved").c_str()) != 0)
            return failed("rename", file.name);
        return {};
    case core::Change::remove:
        if (::unlinkat(folder.get(), name, 0) != 0)
            return failed("delete", file.name);
        return {};
    }
    return {};
}

} // namespace rig::workload
