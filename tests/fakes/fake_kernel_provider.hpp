// SPDX-License-Identifier: MIT
// A KernelProvider for unit tests: every kernel is ready at once (an empty image and
// initramfs in a folder of the test's; the FakeHypervisor boots nothing), or fails to
// build (make's errors), or is refused as a config error (a patch that does not apply), or
// is stopped by Ctrl-C, as the test says per kernel name.
#pragma once

#include "run/kernel_provider.hpp"

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace rig::test {

class FakeKernelProvider final : public run::KernelProvider {
public:
    enum class Result { ready, build_failed, config_error, interrupted };

    explicit FakeKernelProvider(std::filesystem::path dir);

    Expected<run::PreparedKernel> prepare(const core::Scenario& scenario, const core::Cell& cell,
                                          run::Progress& progress) override;

    // How a kernel entry (by name) ends; ready when not set.
    void set(const std::string& kernel, Result result) { m_results[kernel] = result; }
    // Ctrl-C as the build of `kernel` ends: the flag the run watches is set.
    void interrupt_after(const std::string& kernel, std::atomic<bool>& flag);

    // Each kernel asked for, as "name@ref [fragments]", in order.
    std::vector<std::string> asked() const;

private:
    std::filesystem::path m_dir;
    std::map<std::string, Result> m_results;
    std::map<std::string, std::atomic<bool>*> m_interrupts;
    mutable std::mutex m_mutex;
    std::vector<std::string> m_asked;
};

} // namespace rig::test
