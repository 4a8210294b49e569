// SPDX-License-Identifier: MIT
// The libvirt backend: transient, autodestroyed domains on a local or remote libvirtd.
// The only place that includes libvirt's headers.
#pragma once

#include "vm/hypervisor.hpp"

#include <memory>
#include <string>
#include <vector>

namespace rig::vm {

constexpr const char* k_default_libvirt_uri = "qemu:///system";

// The domain XML for a spec, a pure function so that it can be checked without a daemon.
// It boots spec.kernel directly, shares over 9p (path driver) or virtiofs (memfd shared
// memory), writes the console and the result channel to files, and reports a guest
// panic through pvpanic. The domain type is kvm when spec.accel is kvm, qemu (TCG)
// otherwise.
std::string libvirt_domain_xml(const GuestSpec& spec);

// The libvirt accessmode for a 9p security model: none (rig's default, errors of chown
// ignored) is libvirt's squash; mapped-xattr is mapped; passthrough stays.
std::string libvirt_access_mode(const std::string& security_model);

// Whether a URI names the daemon of this machine (no host part), so that the QEMU user
// of this machine is the one whose ownership shares need.
bool libvirt_uri_is_local(const std::string& uri);

// Whether a process with this argument vector is a virtiofsd serving `dir`: libvirt starts
// virtiofsd itself and says nothing of its pid, so rig finds it by its `-o source=` option
// to count its CPU time as the QEMU backend does.
bool libvirt_virtiofsd_serves(const std::vector<std::string>& argv,
                              const std::filesystem::path& dir);

// The CPUs of a libvirt host from its capabilities XML (`<host><topology><cells>`): cell,
// socket and core of each. Empty when the text holds none.
std::vector<core::HostCpu> libvirt_host_cpus(const std::string& capabilities);

// The user QEMU runs as under a local privileged libvirtd: libvirt-qemu on Debian,
// qemu elsewhere; empty when neither exists.
std::string libvirt_qemu_user();

// A hypervisor on one libvirt endpoint. The connection opens on first use; reachable()
// reopens a lost one once, and fails when the daemon is gone.
std::unique_ptr<Hypervisor> make_libvirt_hypervisor(const std::string& uri);

} // namespace rig::vm
