// SPDX-License-Identifier: MIT
// Facts about the host.
#include "host/facts.hpp"

#include "proc/process.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

#include <cctype>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

namespace rig::host {

std::optional<std::filesystem::path> find_virtiofsd() {
    for (const char* candidate : k_virtiofsd_paths)
        if (::access(candidate, X_OK) == 0)
            return candidate;
    return proc::find_program("virtiofsd");
}

std::string virtiofsd_places() {
    std::string places;
    for (const char* candidate : k_virtiofsd_paths)
        places += std::string(candidate) + ", ";
    return places + "then PATH";
}

std::string parse_qemu_version(const std::string& version_output) {
    // "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"
    auto words = util::split(version_output.substr(0, version_output.find('\n')), ' ');
    for (size_t i = 0; i + 1 < words.size(); ++i) {
        const std::string& version = words[i + 1];
        if (words[i] == "version" && !version.empty() &&
            std::isdigit(static_cast<unsigned char>(version[0])) &&
            version.find('.') != std::string::npos)
            return version;
    }
    return {};
}

Facts probe() {
    Facts facts;
    utsname names{};
    if (::uname(&names) == 0) {
        facts.hostname = names.nodename;
        facts.kernel_release = names.release;
    }
    facts.cpus = static_cast<int>(std::thread::hardware_concurrency());
    long pages = ::sysconf(_SC_PHYS_PAGES);
    long page_size = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0)
        facts.memory_mib = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) >> 20;
    proc::RunOptions options;
    options.timeout = std::chrono::seconds(20);
    if (auto result = proc::run({"qemu-system-x86_64", "--version"}, options);
        result && result->exit_code == 0)
        facts.qemu_version = parse_qemu_version(result->out);
    return facts;
}

std::string Facts::to_json() const {
    util::Json out;
    out["hostname"] = hostname;
    out["kernel"] = kernel_release;
    out["cpus"] = cpus;
    out["memory_mib"] = memory_mib;
    if (accel)
        out["accel"] = std::string(core::to_string(*accel));
    out["qemu"] = qemu_version;
    return out.dump();
}

} // namespace rig::host
