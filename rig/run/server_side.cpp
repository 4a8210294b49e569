// SPDX-License-Identifier: MIT
// The server's side of a share: changes and hashes when the guest asks.
#include "run/server_side.hpp"

#include "guest/job.hpp"
#include "util/fd.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>

namespace rig::run {

namespace fs = std::filesystem;

ServerSide::ServerSide(const core::Workload& workload, fs::path share, fs::path acks)
    : m_files(workload::coherency_files(workload)), m_globs(core::output_globs(workload)),
      m_checks(core::paused_phases(workload)), m_share(std::move(share)), m_acks(std::move(acks)) {}

void ServerSide::change(const std::string& name) {
    auto file = std::find_if(m_files.begin(), m_files.end(),
                             [&](const workload::CoherencyFile& f) { return f.name == name; });
    if (file == m_files.end() || !m_done.insert(name).second)
        return;
    if (auto changed = workload::apply_change(m_share, *file); !changed) {
        m_note += changed.error().message + "\n";
        return;
    }
    acknowledge(name);
}

void ServerSide::hash(const std::string& check) {
    const std::string name = "hash-" + check;
    if (m_globs.empty() || std::find(m_checks.begin(), m_checks.end(), check) == m_checks.end() ||
        !m_done.insert(name).second)
        return;
    const auto started = std::chrono::steady_clock::now();
    auto hashed = hash_folder(m_share, m_globs);
    if (!hashed) {
        m_note += "outputs after " + check +
                  ": the share was not hashed: " + hashed.error().message + "\n";
        return;
    }
    // The guest went on to its next phase meanwhile: what was hashed may be of either.
    if (std::chrono::steady_clock::now() - started >= guest::k_ack_wait) {
        m_note += "outputs after " + check +
                  ": hashing the share took longer than the guest waits; not compared\n";
        return;
    }
    m_manifests.emplace(check, std::move(*hashed));
    acknowledge(name);
}

const Manifest* ServerSide::manifest_at(const std::string& check) const {
    auto found = m_manifests.find(check);
    return found == m_manifests.end() ? nullptr : &found->second;
}

void ServerSide::acknowledge(const std::string& name) {
    // The acks folder is rig's alone: the guest sees it read-only.
    util::Fd ack(::open((m_acks / name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!ack.valid())
        m_note += "cannot acknowledge " + name + ": " + std::strerror(errno) + "\n";
}

} // namespace rig::run
