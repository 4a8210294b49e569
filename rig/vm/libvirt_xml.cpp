// SPDX-License-Identifier: MIT
// The libvirt domain XML rig writes, and the host capabilities XML it reads with libxml2.
#include "vm/libvirt_xml.hpp"

#include "core/cpu_set.hpp"
#include "util/strings.hpp"
#include "vm/qemu.hpp"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <memory>
#include <optional>

namespace rig::vm {

namespace fs = std::filesystem;

namespace {

std::string xml_escape(const std::string& text) {
    return util::escape(
        text, {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'\'', "&apos;"}, {'"', "&quot;"}});
}

std::string filesystem_xml(const Share& share) {
    std::string xml;
    if (share.kind == ShareKind::v9p) {
        // multidevs='remap' as the QEMU backend's -fsdev has: the host root spans several
        // file systems, and colliding inode numbers confuse the guest (its /proc mount
        // landed on the host's /proc without it).
        xml = "    <filesystem type='mount' accessmode='" +
              libvirt_access_mode(share.security_model) + "' multidevs='remap'>\n" +
              "      <driver type='path'/>\n";
    } else {
        // virtiofsd runs as root and maps guest ids through, so only passthrough applies.
        // libvirt 9.0 names the modes none and always; auto is virtiofsd's own default,
        // which an element without a mode leaves in place.
        std::string cache = share.virtiofs_cache == "auto" || share.virtiofs_cache.empty()
                                ? "<cache/>"
                                : "<cache mode='" + xml_escape(share.virtiofs_cache) + "'/>";
        xml = "    <filesystem type='mount' accessmode='passthrough'>\n"
              "      <driver type='virtiofs'/>\n"
              "      <binary>" +
              cache + "</binary>\n";
    }
    xml += "      <source dir='" + xml_escape(share.path.string()) + "'/>\n";
    xml += "      <target dir='" + xml_escape(share.tag) + "'/>\n";
    if (share.readonly)
        xml += "      <readonly/>\n";
    return xml + "    </filesystem>\n";
}

// libvirt's pinning: every vCPU and the emulator's threads (main loop, I/O) on the
// guest's set, as the QEMU backend pins the whole process.
std::string cputune_xml(const GuestSpec& spec) {
    if (spec.host_cpus.empty())
        return "";
    std::string set = core::cpu_list_text(spec.host_cpus);
    std::string xml = "  <cputune>\n";
    for (int vcpu = 0; vcpu < spec.cpus; ++vcpu)
        xml += "    <vcpupin vcpu='" + std::to_string(vcpu) + "' cpuset='" + set + "'/>\n";
    return xml + "    <emulatorpin cpuset='" + set + "'/>\n  </cputune>\n";
}

std::string serial_xml(const fs::path& file, int port) {
    return "    <serial type='file'>\n      <source path='" + xml_escape(file.string()) +
           "'/>\n      <target port='" + std::to_string(port) + "'/>\n    </serial>\n";
}

std::optional<int> int_attribute(xmlNode* node, const char* name) {
    xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
    if (!value)
        return std::nullopt;
    std::optional<int> number;
    try {
        number = std::stoi(reinterpret_cast<const char*>(value));
    } catch (const std::exception&) {
    }
    xmlFree(value);
    return number;
}

bool named(xmlNode* node, const char* name) {
    return node->type == XML_ELEMENT_NODE &&
           xmlStrcmp(node->name, reinterpret_cast<const xmlChar*>(name)) == 0;
}

xmlNode* child_named(xmlNode* parent, const char* name) {
    for (xmlNode* node = parent ? parent->children : nullptr; node; node = node->next)
        if (named(node, name))
            return node;
    return nullptr;
}

} // namespace

std::string libvirt_access_mode(const std::string& security_model) {
    if (security_model == "mapped-xattr" || security_model == "mapped")
        return "mapped";
    if (security_model == "passthrough")
        return "passthrough";
    return "squash";
}

std::string libvirt_domain_xml(const GuestSpec& spec) {
    bool kvm = spec.accel == core::Accelerator::kvm;
    bool virtiofs = false;
    for (const Share& share : spec.shares)
        virtiofs = virtiofs || share.kind == ShareKind::virtiofs;
    // The qemu namespace is libvirt's supported way to pass QEMU options it does not model:
    // here the 9p trace log.
    std::string xml = std::string("<domain type='") + (kvm ? "kvm" : "qemu") +
                      "' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n";
    xml += "  <name>" + xml_escape(spec.name) + "</name>\n";
    xml += "  <memory unit='MiB'>" + std::to_string(spec.memory_mib) + "</memory>\n";
    xml += "  <vcpu>" + std::to_string(spec.cpus) + "</vcpu>\n";
    xml += cputune_xml(spec);
    // vhost-user needs guest RAM that virtiofsd can map: a shared memfd.
    if (virtiofs)
        xml += "  <memoryBacking>\n    <source type='memfd'/>\n    <access mode='shared'/>\n"
               "  </memoryBacking>\n";
    xml += "  <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n";
    xml += "    <kernel>" + xml_escape(spec.kernel.string()) + "</kernel>\n";
    xml += "    <initrd>" + xml_escape(spec.initrd.string()) + "</initrd>\n";
    xml += "    <cmdline>" + xml_escape(spec.cmdline) + "</cmdline>\n  </os>\n";
    // The guest ends with a reboot (<on_reboot>), so rig's own kernels need no ACPI; a
    // distribution kernel finds the ISA pvpanic device through it. The CPU model matches
    // the QEMU backend's.
    xml += "  <features>\n    <acpi/>\n  </features>\n";
    xml += kvm ? "  <cpu mode='host-passthrough'/>\n" : "  <cpu mode='maximum'/>\n";
    xml += "  <clock offset='utc'/>\n";
    // As -no-reboot and pvpanic's exit-failure do for QEMU: every end is the end.
    xml += "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n"
           "  <on_crash>destroy</on_crash>\n";
    xml += "  <devices>\n";
    for (const Share& share : spec.shares)
        xml += filesystem_xml(share);
    // libvirt's own chown of disk images (dynamic_ownership) lets QEMU, run as
    // libvirt-qemu, write the scratch image rig created.
    if (!spec.scratch_disk.empty())
        xml += "    <disk type='file' device='disk'>\n      <driver name='qemu' type='raw'/>\n"
               "      <source file='" +
               xml_escape(spec.scratch_disk.string()) +
               "'/>\n      <target dev='vda' bus='virtio'/>\n      <serial>" + k_scratch_serial +
               "</serial>\n    </disk>\n";
    xml += serial_xml(spec.console_log, 0);
    xml += serial_xml(spec.channel_log, 1);
    // QEMU's pvpanic device; libvirt 9.0 calls the x86 one "isa" (pvpanic-pci came later).
    xml += "    <panic model='isa'/>\n";
    // -nodefaults: no USB, no balloon, no display.
    xml += "    <controller type='usb' model='none'/>\n";
    xml += "    <memballoon model='none'/>\n";
    xml += "  </devices>\n";
    if (!spec.protocol_trace.empty()) {
        xml += "  <qemu:commandline>\n";
        for (const std::string& option : protocol_trace_options(spec.protocol_trace))
            xml += "    <qemu:arg value='" + xml_escape(option) + "'/>\n";
        xml += "  </qemu:commandline>\n";
    }
    return xml + "</domain>\n";
}

std::vector<core::HostCpu> libvirt_host_cpus(const std::string& capabilities) {
    std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc(
        xmlReadMemory(capabilities.data(), static_cast<int>(capabilities.size()),
                      "capabilities.xml", nullptr,
                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
        xmlFreeDoc);
    std::vector<core::HostCpu> cpus;
    if (!doc)
        return cpus;
    xmlNode* cells = child_named(
        child_named(child_named(xmlDocGetRootElement(doc.get()), "host"), "topology"), "cells");
    for (xmlNode* cell = cells ? cells->children : nullptr; cell; cell = cell->next) {
        if (!named(cell, "cell"))
            continue;
        int node = int_attribute(cell, "id").value_or(0);
        xmlNode* list = child_named(cell, "cpus");
        for (xmlNode* entry = list ? list->children : nullptr; entry; entry = entry->next) {
            auto id = named(entry, "cpu") ? int_attribute(entry, "id") : std::nullopt;
            if (!id)
                continue;
            core::HostCpu cpu;
            cpu.id = *id;
            cpu.node = node;
            cpu.package = int_attribute(entry, "socket_id").value_or(0);
            cpu.core = int_attribute(entry, "core_id").value_or(-1 - *id);
            cpus.push_back(cpu);
        }
    }
    return cpus;
}

} // namespace rig::vm
