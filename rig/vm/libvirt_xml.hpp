// SPDX-License-Identifier: MIT
// The libvirt backend's XML, as pure functions: the domain rig defines, the host's CPUs.
#pragma once

#include "vm/hypervisor.hpp"

#include <string>
#include <vector>

namespace rig::vm {

// The domain XML for a spec, a pure function so that it can be checked without a daemon.
// It boots spec.kernel directly, shares over 9p (path driver) or virtiofs (memfd shared
// memory), writes the console and the result channel to files, and reports a guest
// panic through pvpanic. The domain type is kvm when spec.accel is kvm, qemu (TCG)
// otherwise.
std::string libvirt_domain_xml(const GuestSpec& spec);

// The libvirt accessmode for a 9p security model: none (rig's default, errors of chown
// ignored) is libvirt's squash; mapped-xattr is mapped; passthrough stays.
std::string libvirt_access_mode(const std::string& security_model);

// The CPUs of a libvirt host from its capabilities XML (`<host><topology><cells>`): cell,
// socket and core of each. Empty when the text holds none.
std::vector<core::HostCpu> libvirt_host_cpus(const std::string& capabilities);

} // namespace rig::vm
