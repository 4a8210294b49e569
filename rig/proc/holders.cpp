// SPDX-License-Identifier: MIT
// Processes by what /proc says they have open and where they work.
#include "proc/holders.hpp"

#include "util/file.hpp"
#include "util/strings.hpp"

#include <charconv>
#include <functional>
#include <unistd.h>

namespace rig::proc {

namespace fs = std::filesystem;

namespace {

// Every process but this one, by pid, with its /proc folder.
void for_each_process(const std::function<void(int pid, const fs::path& dir)>& visit) {
    std::error_code ec;
    const int self = ::getpid();
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        std::string name = entry.path().filename().string();
        int pid = 0;
        auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), pid);
        if (error != std::errc() || end != name.data() + name.size() || pid == self)
            continue;
        visit(pid, entry.path());
    }
}

ProcessRef process(int pid, const fs::path& dir) {
    return {pid, std::string(util::trim(util::read_file(dir / "comm")))};
}

// The path as /proc's links spell it: absolute, symlinks resolved.
fs::path as_linked(const fs::path& path) {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(fs::absolute(path), ec);
    return ec ? path : resolved;
}

} // namespace

std::vector<ProcessRef> processes_with_open(const fs::path& file) {
    const fs::path wanted = as_linked(file);
    std::vector<ProcessRef> out;
    for_each_process([&](int pid, const fs::path& dir) {
        std::error_code ec;
        for (const auto& fd : fs::directory_iterator(dir / "fd", ec)) {
            std::error_code link_error;
            if (fs::read_symlink(fd.path(), link_error) == wanted && !link_error) {
                out.push_back(process(pid, dir));
                return;
            }
        }
    });
    return out;
}

std::vector<ProcessRef> processes_working_in(const fs::path& dir, std::string_view name) {
    const std::string wanted = as_linked(dir).string();
    std::vector<ProcessRef> out;
    for_each_process([&](int pid, const fs::path& proc_dir) {
        ProcessRef found = process(pid, proc_dir);
        if (found.name != name)
            return;
        std::error_code ec;
        std::string cwd = fs::read_symlink(proc_dir / "cwd", ec).string();
        if (!ec && (cwd == wanted || util::starts_with(cwd, wanted + "/")))
            out.push_back(found);
    });
    return out;
}

std::string describe(const std::vector<ProcessRef>& processes) {
    std::vector<std::string> names;
    for (const ProcessRef& process : processes)
        names.push_back("process " + std::to_string(process.pid) + " (" + process.name + ")");
    return util::join(names, ", ");
}

} // namespace rig::proc
