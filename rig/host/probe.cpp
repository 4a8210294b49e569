// SPDX-License-Identifier: MIT
// The real host probe.
#include "host/probe.hpp"

#include "host/kvm_probe.hpp"

namespace rig::host {

namespace {

class LocalProbe final : public Probe {
public:
    Facts facts() override { return probe(); }
    Expected<core::Accelerator> accel(core::Accel requested,
                                      const std::filesystem::path& cache_dir) override {
        return choose_accel(requested, cache_dir);
    }
};

} // namespace

Probe& local_probe() {
    static LocalProbe local;
    return local;
}

} // namespace rig::host
