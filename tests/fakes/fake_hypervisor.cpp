// SPDX-License-Identifier: MIT
// The scripted guest: output appended to the log files at their times, as QEMU's serial
// file backends append a real guest's.
#include "fake_hypervisor.hpp"

#include "util/base64.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <fstream>

namespace rig::test {

namespace {

using Clock = std::chrono::steady_clock;

class FakeVm final : public vm::Vm {
public:
    FakeVm(GuestScript script, const vm::GuestSpec& spec,
           std::shared_ptr<std::atomic<int>> destroyed)
        : m_script(std::move(script)), m_console(spec.console_log), m_channel(spec.channel_log),
          m_destroyed(std::move(destroyed)) {
        // Scripts are written in any order: a record added after a run of console lines
        // still comes out at its time.
        std::stable_sort(m_script.outputs.begin(), m_script.outputs.end(),
                         [](const auto& a, const auto& b) { return a.at < b.at; });
        for (const GuestScript::ShareFile& file : m_script.share_files)
            for (const vm::Share& share : spec.shares)
                if (share.tag == file.tag)
                    std::ofstream(share.path / file.path, std::ios::binary) << file.content;
    }

    std::optional<int> poll() override {
        if (m_gone)
            return m_status;
        milliseconds now = elapsed();
        play_until(now);
        if (m_script.exit_at && now >= *m_script.exit_at) {
            m_gone = true;
            m_status = m_script.exit_status;
        }
        return m_status;
    }

    vm::CpuTimes cpu_times() override {
        return {std::chrono::duration<double>(elapsed()).count(), 0};
    }

    void destroy() override {
        if (!m_gone)
            ++*m_destroyed;
        m_gone = true;
    }

    std::optional<std::string> helper_failure() override {
        if (m_script.helper_fails_at && elapsed() >= *m_script.helper_fails_at)
            return m_script.helper_failure;
        return std::nullopt;
    }

    std::string describe() const override { return "fake guest"; }

private:
    milliseconds elapsed() const {
        return std::chrono::duration_cast<milliseconds>(Clock::now() - m_started);
    }

    // Writes every output whose time has come and that is not written yet, in order.
    void play_until(milliseconds now) {
        while (m_next < m_script.outputs.size() && m_script.outputs[m_next].at <= now) {
            const GuestScript::Output& output = m_script.outputs[m_next++];
            const auto& path = output.stream == Stream::console ? m_console : m_channel;
            std::ofstream(path, std::ios::binary | std::ios::app) << output.bytes;
        }
    }

    GuestScript m_script;
    std::filesystem::path m_console;
    std::filesystem::path m_channel;
    std::shared_ptr<std::atomic<int>> m_destroyed;
    Clock::time_point m_started = Clock::now();
    size_t m_next = 0;
    bool m_gone = false;
    std::optional<int> m_status;
};

} // namespace

GuestScript& GuestScript::console(milliseconds at, const std::string& line) {
    outputs.push_back({at, Stream::console, line + "\n"});
    return *this;
}

GuestScript& GuestScript::channel(milliseconds at, const std::string& record) {
    outputs.push_back({at, Stream::channel, "RIG " + record + "\n"});
    return *this;
}

GuestScript& GuestScript::exit(milliseconds at, int status) {
    exit_at = at;
    exit_status = status;
    return *this;
}

GuestScript& GuestScript::hello(milliseconds at) {
    console(at, "Linux version 6.1.0-fake");
    return channel(at, "hello 2 6.1.0-fake run");
}

GuestScript& GuestScript::workload(milliseconds start, milliseconds end, int status) {
    auto ns = [](milliseconds at) { return std::to_string(at.count() * 1'000'000); };
    channel(start, "start " + ns(start));
    channel(end, "end " + ns(end) + " " + std::to_string(status));
    return channel(end, "output 0");
}

GuestScript& GuestScript::done(milliseconds at) {
    return channel(at, "done");
}

GuestScript& GuestScript::wrote(milliseconds at, const std::string& tag,
                                const std::vector<std::pair<std::string, std::string>>& files) {
    std::string sums;
    for (const auto& [path, content] : files) {
        share_files.push_back({tag, path, content});
        sums += util::sha256_hex(content) + "  " + path + "\n";
    }
    channel(at, "outputs " + util::base64_encode(sums));
    return channel(at, "hashed outputs");
}

namespace {

// hello, a workload from `start` to `end`, done, and poweroff `end` / 3 later.
GuestScript whole_guest(int workload_status, milliseconds start, milliseconds end) {
    GuestScript script;
    script.hello(milliseconds(0))
        .workload(start, end, workload_status)
        .done(end)
        .exit(end + end / 3, 0);
    return script;
}

} // namespace

GuestScript finished_guest(int workload_status) {
    return whole_guest(workload_status, milliseconds(10), milliseconds(30));
}

GuestScript quick_guest(int workload_status) {
    return whole_guest(workload_status, milliseconds(1), milliseconds(3));
}

FakeHypervisor::FakeHypervisor(GuestScript script)
    : m_choose([script](const vm::GuestSpec&) { return script; }) {}

FakeHypervisor::FakeHypervisor(std::function<GuestScript(const vm::GuestSpec&)> choose)
    : m_choose(std::move(choose)) {}

Expected<std::unique_ptr<vm::Vm>> FakeHypervisor::start(const vm::GuestSpec& spec) {
    GuestScript script;
    {
        std::lock_guard lock(m_mutex);
        m_started.push_back(spec);
        script = m_choose(spec);
    }
    if (script.start_error)
        return fail(ErrorKind::infra, *script.start_error);
    return std::unique_ptr<vm::Vm>(std::make_unique<FakeVm>(std::move(script), spec, m_destroyed));
}

} // namespace rig::test
