// SPDX-License-Identifier: MIT
// The QEMU backend: qemu-system-x86_64 and virtiofsd started directly, from argv.
#pragma once

#include "vm/hypervisor.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace rig::vm {

// The QEMU command line for a spec. `virtiofs_sockets` holds one socket per virtiofs
// share, in share order.
std::vector<std::string> qemu_argv(const GuestSpec& spec,
                                   const std::vector<std::filesystem::path>& virtiofs_sockets);

std::vector<std::string> virtiofsd_argv(const std::filesystem::path& daemon, const Share& share,
                                        const std::filesystem::path& socket);

// QEMU's option parser (-fsdev, -chardev, -trace) splits at single commas; a literal one
// is ",,".
std::string escape_commas(const std::string& value);

// The options that make QEMU write the 9p trace log `log`, with its events file beside it
// (`log` + ".events", written by write_protocol_trace_events).
std::vector<std::string> protocol_trace_options(const std::filesystem::path& log);
Expected<void> write_protocol_trace_events(const std::filesystem::path& log);

std::unique_ptr<Hypervisor> make_qemu_hypervisor();

} // namespace rig::vm
