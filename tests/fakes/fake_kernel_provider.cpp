// SPDX-License-Identifier: MIT
// The fake kernel provider.
#include "fake_kernel_provider.hpp"

#include "util/strings.hpp"

#include <fstream>

namespace rig::test {

FakeKernelProvider::FakeKernelProvider(std::filesystem::path dir) : m_dir(std::move(dir)) {
    std::filesystem::create_directories(m_dir);
}

void FakeKernelProvider::interrupt_after(const std::string& kernel, std::atomic<bool>& flag) {
    m_interrupts[kernel] = &flag;
}

std::vector<std::string> FakeKernelProvider::asked() const {
    std::lock_guard lock(m_mutex);
    return m_asked;
}

Expected<run::PreparedKernel> FakeKernelProvider::prepare(const core::Scenario& scenario,
                                                          const core::Cell& cell,
                                                          run::Progress& progress) {
    const core::Kernel& kernel = scenario.kernels.at(cell.kernel);
    {
        std::lock_guard lock(m_mutex);
        m_asked.push_back(kernel.name + "@" + kernel.ref + " [" + util::join(cell.fragments, ", ") +
                          "]");
    }
    if (auto flag = m_interrupts.find(kernel.name); flag != m_interrupts.end())
        *flag->second = true;
    auto result = m_results.find(kernel.name);
    if (result != m_results.end() && result->second == Result::build_failed) {
        run::PreparedKernel failed;
        failed.build_failure = run::KernelBuildFailure{
            "kernel " + kernel.name + " at fake",
            "fs/9p/vfs_file.c:42:1: error: expected ';' before '}' token\n"
            "make[4]: *** [scripts/Makefile.build:250: fs/9p/vfs_file.o] Error 1",
            m_dir / (kernel.name + ".log")};
        progress.note("kernel " + kernel.name + ": fake, build-failed");
        return failed;
    }
    if (result != m_results.end() && result->second == Result::config_error)
        return fail(ErrorKind::config, "kernel " + kernel.name + ": config-error");
    if (result != m_results.end() && result->second == Result::interrupted)
        return fail(ErrorKind::interrupted, "interrupted during the kernel build");
    run::PreparedKernel prepared;
    prepared.artifact.id = "fake-" + kernel.name;
    prepared.artifact.boot_image = m_dir / (kernel.name + ".vmlinux");
    prepared.base_initrd = m_dir / (kernel.name + ".cpio");
    std::ofstream(prepared.artifact.boot_image);
    std::ofstream(prepared.base_initrd);
    progress.note("kernel " + kernel.name + ": fake, ready");
    return prepared;
}

} // namespace rig::test
