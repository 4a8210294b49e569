// SPDX-License-Identifier: MIT
// Where the run loop gets a cell's kernel ready to boot: the seam between the loop and the
// kernel builder, the Debian fetcher and the initramfs builder.
#pragma once

#include "core/cell.hpp"
#include "core/scenario.hpp"
#include "kernel/artifact.hpp"
#include "kernel/module.hpp"
#include "run/progress.hpp"
#include "run/sample.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>

namespace rig::run {

struct PreparedKernel {
    kernel::Artifact artifact;
    std::filesystem::path base_initrd;
    std::optional<kernel::ModuleBuild> module; // a module workload's build for this kernel
    // A git kernel that does not build: no artifact, and its cells' samples are
    // build-failed (run/sample.hpp) while the other kernels' cells run.
    std::optional<KernelBuildFailure> build_failure;
};

class KernelProvider {
public:
    virtual ~KernelProvider() = default;
    // The kernel `cell` boots, with its base initramfs and, for a module workload, its
    // module built against it. ErrorKind::interrupted when Ctrl-C stopped a build. A kernel
    // whose make fails is a PreparedKernel with its build_failure; a patch that does not
    // apply or a requested option the .config lacks is a config error that names it, its
    // commit and what is wrong: the scenario asks for what cannot be, and must change.
    virtual Expected<PreparedKernel> prepare(const core::Scenario& scenario, const core::Cell& cell,
                                             Progress& progress) = 0;
};

// The real one: git kernels built and prebuilt ones fetched into `cache`, each build and
// artifact recorded in `db`; progress at most every 30 s where `tty` is false.
std::unique_ptr<KernelProvider> make_kernel_provider(const std::filesystem::path& cache, bool tty,
                                                     store::Database& db,
                                                     const std::atomic<bool>& interrupted);

} // namespace rig::run
