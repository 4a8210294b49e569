// SPDX-License-Identifier: MIT
// The fake commit builder.
#include "fake_commit_builder.hpp"

#include "kernel/config.hpp"

#include <algorithm>
#include <fstream>
#include <thread>

namespace rig::test {

FakeCommitBuilder::FakeCommitBuilder(std::filesystem::path dir) : m_dir(std::move(dir)) {
    std::filesystem::create_directories(m_dir);
}

Expected<std::optional<kernel::BuildResult>>
FakeCommitBuilder::build(const kernel::GitRequest& request, const std::string&,
                         const std::string& prefix, std::ostream& out, const std::atomic<bool>&) {
    built.push_back(request.ref);
    out << prefix << "fake build\n";
    bool first = false;
    {
        std::lock_guard lock(m_mutex);
        first = charged.insert(request.ref + (request.patches.empty() ? "" : "+patched")).second;
    }
    if (build_cost.count() > 0 && first)
        std::this_thread::sleep_for(build_cost);
    kernel::BuildResult result;
    result.commit = request.ref;
    // What the build cost, as a real build reports it; a millisecond when it cost nothing.
    result.seconds = std::max<double>(build_cost.count(), 1) / 1000;
    if (broken.count(request.ref)) {
        result.outcome = core::BuildOutcome::build_failed;
        result.error_lines = "fs/9p/vfs_file.c:1:1: error: expected ';'";
        return result;
    }
    kernel::Artifact artifact;
    artifact.id = request.ref.substr(0, 16);
    // Patched builds (the verification's revert) boot an image of their own.
    artifact.boot_image =
        m_dir / (request.ref + (request.patches.empty() ? "" : "+patched") + ".vmlinux");
    std::ofstream(artifact.boot_image);
    result.artifact = artifact;
    return result;
}

Expected<kernel::ConfigResult> FakeCommitBuilder::configure(const kernel::GitRequest& request,
                                                            std::ostream&) {
    kernel::ConfigResult result;
    result.commit = request.ref;
    result.config = m_dir / ("config-" + std::to_string(++m_configs));
    std::ofstream out(result.config);
    for (const auto& [symbol, value] : request.options) {
        std::string written =
            value.substr(!value.empty() && value.front() == kernel::k_wish_mark ? 1 : 0);
        out << (written == "n" ? "# " + symbol + " is not set" : symbol + "=" + written) << "\n";
    }
    return result;
}

Expected<std::filesystem::path> FakeCommitBuilder::initramfs(const kernel::Artifact&) {
    ++steps_prepared;
    if (step_cost.count() > 0)
        std::this_thread::sleep_for(step_cost);
    std::filesystem::path initrd = m_dir / "base.cpio";
    std::ofstream(initrd, std::ios::app);
    return initrd;
}

Expected<void> FakeCommitBuilder::build_ahead(const kernel::GitRequest& request, int,
                                              const std::atomic<bool>& interrupted) {
    {
        std::lock_guard lock(m_mutex);
        ahead.push_back(request.ref);
        if (charged.count(request.ref))
            return {};
    }
    // The build's cost in slices, so that a stop ends it part way, unpaid: the step that
    // needs the commit then pays it whole.
    constexpr std::chrono::milliseconds k_slice{1};
    const std::chrono::milliseconds cost = ahead_cost.value_or(build_cost);
    for (auto spent = std::chrono::milliseconds(0); spent < cost; spent += k_slice) {
        if (interrupted)
            return {};
        std::this_thread::sleep_for(k_slice);
    }
    std::lock_guard lock(m_mutex);
    charged.insert(request.ref);
    return {};
}

std::string FakeCommitBuilder::commit_of(const std::filesystem::path& boot_image) {
    std::string name = boot_image.stem().string();
    return name.substr(0, name.find('+'));
}

} // namespace rig::test
