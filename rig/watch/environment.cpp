// SPDX-License-Identifier: MIT
// The environment fingerprint, in words, so that a change can be logged as what changed.
#include "watch/environment.hpp"

#include "proc/process.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

#include <gnu/libc-version.h>

namespace rig::watch {

namespace {

// The compiler a guest's workload runs: the host's, read once.
const std::string& compiler_version() {
    static const std::string version = [] {
        auto result = proc::run({"gcc", "-dumpfullversion"});
        if (!result || result->exit_code != 0)
            return std::string("none");
        return std::string(util::trim(result->out));
    }();
    return version;
}

} // namespace

Expected<std::string> environment_of(const store::RunInfo& run) {
    util::Json facts = util::Json::parse(run.host_facts, nullptr, false);
    auto fact = [&](const char* name) {
        return facts.is_object() && facts.contains(name) && facts[name].is_string()
                   ? facts[name].get<std::string>()
                   : std::string("?");
    };
    return "qemu " + fact("qemu") + ", " + fact("accel") + ", rig " + run.rig_version + ", gcc " +
           compiler_version() + ", glibc " + gnu_get_libc_version();
}

} // namespace rig::watch
