// SPDX-License-Identifier: MIT
// The libvirt backend: transient, autodestroyed domains on a local or remote libvirtd.
// The only place that includes libvirt's headers.
#pragma once

#include "vm/hypervisor.hpp"
#include "vm/libvirt_xml.hpp"

#include <memory>
#include <string>
#include <vector>

namespace rig::vm {

constexpr const char* k_default_libvirt_uri = "qemu:///system";

// Whether a URI names the daemon of this machine (no host part), so that the QEMU user
// of this machine is the one whose ownership shares need.
bool libvirt_uri_is_local(const std::string& uri);

// Whether a process with this argument vector is a virtiofsd serving `dir`: libvirt starts
// virtiofsd itself and says nothing of its pid, so rig finds it by its `-o source=` option
// to count its CPU time as the QEMU backend does.
bool libvirt_virtiofsd_serves(const std::vector<std::string>& argv,
                              const std::filesystem::path& dir);

// The user QEMU runs as under a local privileged libvirtd: libvirt-qemu on Debian,
// qemu elsewhere; empty when neither exists.
std::string libvirt_qemu_user();

// A hypervisor on one libvirt endpoint. The connection opens on first use; reachable()
// reopens a lost one once, and fails when the daemon is gone.
std::unique_ptr<Hypervisor> make_libvirt_hypervisor(const std::string& uri);

} // namespace rig::vm
