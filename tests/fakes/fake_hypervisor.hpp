// SPDX-License-Identifier: MIT
// A Hypervisor for unit tests: instead of booting, it plays a script of console and
// channel output at given times, then exits with a given status, fails a helper, or
// fails to start at all. Tests of run_sample and of the bisect's measure loop run
// through it in milliseconds.
#pragma once

#include "vm/hypervisor.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rig::test {

using std::chrono::milliseconds;

enum class Stream { console, channel };

// What one fake guest does, on a clock that starts when the hypervisor starts it. Output
// is written to the spec's console_log and channel_log as the sample polls the guest,
// once its time has come; a guest with no exit runs (silently, after its script) until
// it is destroyed.
struct GuestScript {
    struct Output {
        milliseconds at;
        Stream stream;
        std::string bytes;
    };
    std::vector<Output> outputs;
    std::optional<milliseconds> exit_at;
    int exit_status = 0;
    std::optional<std::string> start_error; // start() fails: the sample is an infra error
    std::optional<milliseconds> helper_fails_at;
    std::string helper_failure = "virtiofsd exited with status 1";
    // Files the guest leaves in a share when it starts: (share tag, path in it, content).
    struct ShareFile {
        std::string tag;
        std::string path;
        std::string content;
    };
    std::vector<ShareFile> share_files;

    GuestScript& console(milliseconds at, const std::string& line);
    GuestScript& channel(milliseconds at, const std::string& record); // "start 1000"
    GuestScript& exit(milliseconds at, int status);

    // The agent's records of a workload that runs from `start` to `end` and exits with
    // `status`, then "done", and a poweroff soon after: a guest that did everything.
    GuestScript& hello(milliseconds at);
    GuestScript& workload(milliseconds start, milliseconds end, int status);
    GuestScript& done(milliseconds at);
    // A workload that wrote `files` (path, content) into the share tagged `tag`, and the
    // agent's hashes of them at `at`: what guest and server both see.
    GuestScript& wrote(milliseconds at, const std::string& tag,
                       const std::vector<std::pair<std::string, std::string>>& files);
};

// A whole sample's script: hello, a workload from 10 to 30 ms with this exit status,
// done and poweroff.
GuestScript finished_guest(int workload_status = 0);
// The same in 3 ms, for tests of what runs samples (the run loop, the bisect driver), not
// of a sample itself.
GuestScript quick_guest(int workload_status = 0);

class FakeHypervisor final : public vm::Hypervisor {
public:
    // Every guest plays the same script.
    explicit FakeHypervisor(GuestScript script);
    // Each guest's script is chosen from what it boots (its kernel, its name).
    explicit FakeHypervisor(std::function<GuestScript(const vm::GuestSpec&)> choose);

    std::string name() const override { return "fake"; }
    // Safe from several threads at once, as --jobs starts guests.
    Expected<std::unique_ptr<vm::Vm>> start(const vm::GuestSpec& spec) override;
    // A host of `cpus` cores, one CPU each, unless set_host_cpus says otherwise.
    Expected<std::vector<core::HostCpu>> host_cpus() override { return m_host_cpus; }
    void set_host_cpus(std::vector<core::HostCpu> cpus) { m_host_cpus = std::move(cpus); }
    // q35 only, as libvirt, unless told it boots microvm as the QEMU backend does.
    bool boots_microvm() const override { return m_microvm; }
    void set_boots_microvm(bool microvm) { m_microvm = microvm; }

    // What it was asked to boot, in order, and how many guests were destroyed.
    const std::vector<vm::GuestSpec>& started() const { return m_started; }
    int destroyed() const { return *m_destroyed; }

private:
    std::mutex m_mutex;
    std::vector<core::HostCpu> m_host_cpus{{0, 0, 0, 0}, {1, 1, 0, 0}, {2, 2, 0, 0}, {3, 3, 0, 0}};
    std::function<GuestScript(const vm::GuestSpec&)> m_choose;
    bool m_microvm = false;
    std::vector<vm::GuestSpec> m_started;
    std::shared_ptr<std::atomic<int>> m_destroyed = std::make_shared<std::atomic<int>>(0);
};

} // namespace rig::test
