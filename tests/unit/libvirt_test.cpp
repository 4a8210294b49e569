// SPDX-License-Identifier: MIT
// Tests of vm/libvirt's domain XML, a pure function of the guest spec.
#include "vm/libvirt.hpp"

#include <gtest/gtest.h>

using namespace rig::vm;

namespace {

GuestSpec base_spec() {
    GuestSpec spec;
    spec.name = "rig-abc123-0";
    spec.kernel = "/out/run/kernel";
    spec.initrd = "/out/run/initrd.cpio";
    spec.cmdline = "console=ttyS0 panic=-1 rdinit=/init";
    spec.memory_mib = 1024;
    spec.cpus = 2;
    spec.accel = rig::core::Accelerator::tcg;
    spec.console_log = "/out/run/console.log";
    spec.channel_log = "/out/run/channel.log";
    spec.runtime_dir = "/out/run";
    Share root;
    root.tag = "hostroot";
    root.path = "/";
    root.readonly = true;
    spec.shares.push_back(root);
    return spec;
}

Share work_share(ShareKind kind) {
    Share share;
    share.kind = kind;
    share.tag = "work";
    share.path = "/out/run/share";
    return share;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

size_t count(const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++n;
    return n;
}

} // namespace

TEST(LibvirtXml, DirectKernelBootUnderTcg) {
    std::string xml = libvirt_domain_xml(base_spec());
    EXPECT_EQ(xml.rfind("<domain type='qemu' ", 0), 0u) << xml;
    EXPECT_TRUE(contains(xml, "<name>rig-abc123-0</name>"));
    EXPECT_TRUE(contains(xml, "<memory unit='MiB'>1024</memory>"));
    EXPECT_TRUE(contains(xml, "<vcpu>2</vcpu>"));
    EXPECT_TRUE(contains(xml, "<type arch='x86_64' machine='q35'>hvm</type>"));
    EXPECT_TRUE(contains(xml, "<kernel>/out/run/kernel</kernel>"));
    EXPECT_TRUE(contains(xml, "<initrd>/out/run/initrd.cpio</initrd>"));
    EXPECT_TRUE(contains(xml, "<cmdline>console=ttyS0 panic=-1 rdinit=/init</cmdline>"));
    EXPECT_TRUE(contains(xml, "<cpu mode='maximum'/>"));
    EXPECT_TRUE(contains(xml, "<acpi/>"));
    // A panic and every kind of end stop the domain, as -no-reboot and pvpanic do.
    EXPECT_TRUE(contains(xml, "<on_poweroff>destroy</on_poweroff>"));
    EXPECT_TRUE(contains(xml, "<on_reboot>destroy</on_reboot>"));
    EXPECT_TRUE(contains(xml, "<on_crash>destroy</on_crash>"));
    EXPECT_TRUE(contains(xml, "<panic model='isa'/>"));
    // No virtiofs, no shared memory.
    EXPECT_FALSE(contains(xml, "memoryBacking"));
}

TEST(LibvirtXml, KvmWhenTheSpecAsksForIt) {
    GuestSpec spec = base_spec();
    spec.accel = rig::core::Accelerator::kvm;
    std::string xml = libvirt_domain_xml(spec);
    EXPECT_EQ(xml.rfind("<domain type='kvm' ", 0), 0u);
    EXPECT_TRUE(contains(xml, "<cpu mode='host-passthrough'/>"));
}

TEST(LibvirtXml, ConsoleThenResultChannelAsSerialFiles) {
    std::string xml = libvirt_domain_xml(base_spec());
    // The agent writes records to /dev/ttyS1: the channel must be the second port.
    size_t console = xml.find("<source path='/out/run/console.log'/>\n      <target port='0'/>");
    size_t channel = xml.find("<source path='/out/run/channel.log'/>\n      <target port='1'/>");
    ASSERT_NE(console, std::string::npos) << xml;
    ASSERT_NE(channel, std::string::npos) << xml;
    EXPECT_LT(console, channel);
    EXPECT_EQ(count(xml, "<serial type='file'>"), 2u);
}

TEST(LibvirtXml, NinePSharesUseThePathDriverAndAnAccessMode) {
    GuestSpec spec = base_spec();
    spec.shares.push_back(work_share(ShareKind::v9p));
    std::string xml = libvirt_domain_xml(spec);
    EXPECT_EQ(count(xml, "<filesystem type='mount' accessmode='squash' multidevs='remap'>"), 2u)
        << xml;
    EXPECT_EQ(count(xml, "<driver type='path'/>"), 2u);
    EXPECT_TRUE(contains(xml, "<source dir='/'/>\n      <target dir='hostroot'/>\n"
                              "      <readonly/>"));
    EXPECT_TRUE(contains(xml, "<source dir='/out/run/share'/>\n      <target dir='work'/>\n"
                              "    </filesystem>"));
}

TEST(LibvirtXml, AccessModesFollowTheNinePSecurityModel) {
    EXPECT_EQ(libvirt_access_mode("none"), "squash");
    EXPECT_EQ(libvirt_access_mode("passthrough"), "passthrough");
    EXPECT_EQ(libvirt_access_mode("mapped-xattr"), "mapped");
    GuestSpec spec = base_spec();
    Share mapped = work_share(ShareKind::v9p);
    mapped.security_model = "mapped-xattr";
    spec.shares.push_back(mapped);
    EXPECT_TRUE(contains(libvirt_domain_xml(spec), "accessmode='mapped'"));
}

TEST(LibvirtXml, VirtiofsHasSharedMemfdMemoryAndItsCacheMode) {
    GuestSpec spec = base_spec();
    Share work = work_share(ShareKind::virtiofs);
    work.virtiofs_cache = "always";
    spec.shares.push_back(work);
    std::string xml = libvirt_domain_xml(spec);
    EXPECT_TRUE(contains(xml, "<memoryBacking>\n    <source type='memfd'/>\n"
                              "    <access mode='shared'/>\n  </memoryBacking>"))
        << xml;
    EXPECT_TRUE(contains(xml, "<driver type='virtiofs'/>\n      <binary><cache mode='always'/>"
                              "</binary>\n      <source dir='/out/run/share'/>"));
    // The root share stays 9p beside it.
    EXPECT_EQ(count(xml, "<driver type='path'/>"), 1u);
}

TEST(LibvirtXml, VirtiofsAutoCacheLeavesVirtiofsdsDefault) {
    GuestSpec spec = base_spec();
    spec.shares.push_back(work_share(ShareKind::virtiofs));
    std::string xml = libvirt_domain_xml(spec);
    // libvirt 9.0 knows none and always; auto is virtiofsd's default.
    EXPECT_TRUE(contains(xml, "<binary><cache/></binary>")) << xml;
    EXPECT_FALSE(contains(xml, "mode='auto'"));
}

TEST(LibvirtXml, TextIsEscaped) {
    GuestSpec spec = base_spec();
    spec.cmdline = "a=<b> c='d' & e";
    Share odd = work_share(ShareKind::v9p);
    odd.path = "/out/it's & <here>";
    spec.shares.push_back(odd);
    std::string xml = libvirt_domain_xml(spec);
    EXPECT_TRUE(contains(xml, "<cmdline>a=&lt;b&gt; c=&apos;d&apos; &amp; e</cmdline>")) << xml;
    EXPECT_TRUE(contains(xml, "<source dir='/out/it&apos;s &amp; &lt;here&gt;'/>"));
}

TEST(LibvirtUri, LocalOrRemote) {
    EXPECT_TRUE(libvirt_uri_is_local("qemu:///system"));
    EXPECT_TRUE(libvirt_uri_is_local("qemu+unix:///system?socket=/x/libvirt-sock"));
    EXPECT_FALSE(libvirt_uri_is_local("qemu+ssh://lab2/system"));
    EXPECT_FALSE(libvirt_uri_is_local("qemu+tcp://10.0.0.2/system"));
}

TEST(LibvirtVirtiofsd, FoundByTheFolderItServes) {
    std::string daemon = "/usr/lib/qemu/virtiofsd";
    EXPECT_TRUE(libvirt_virtiofsd_serves({daemon, "--fd=31", "-o", "source=/out/run/share"},
                                         "/out/run/share"));
    EXPECT_TRUE(libvirt_virtiofsd_serves(
        {daemon, "--fd=31", "-o", "source=/out/run/share,cache=none"}, "/out/run/share"));
    // Another sample's folder, a longer name, or another program is not it.
    EXPECT_FALSE(
        libvirt_virtiofsd_serves({daemon, "-o", "source=/out/run/share2"}, "/out/run/share"));
    EXPECT_FALSE(
        libvirt_virtiofsd_serves({daemon, "-o", "source=/out/other/share"}, "/out/run/share"));
    EXPECT_FALSE(libvirt_virtiofsd_serves(
        {"/usr/bin/qemu-system-x86_64", "-o", "source=/out/run/share"}, "/out/run/share"));
    EXPECT_FALSE(libvirt_virtiofsd_serves({}, "/out/run/share"));
    // libvirt doubles a comma inside the folder's name.
    EXPECT_TRUE(
        libvirt_virtiofsd_serves({daemon, "-o", "source=/out/a,,b,cache=always"}, "/out/a,b"));
    EXPECT_FALSE(libvirt_virtiofsd_serves({daemon, "-o", "source=/out/a,b"}, "/out/a,b"));
}

TEST(LibvirtXml, ProtocolTraceThroughTheQemuNamespace) {
    GuestSpec spec = base_spec();
    EXPECT_FALSE(contains(libvirt_domain_xml(spec), "<qemu:commandline>"));
    spec.protocol_trace = "/out/run/9p.trace";
    std::string xml = libvirt_domain_xml(spec);
    EXPECT_TRUE(contains(xml, "xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'"));
    EXPECT_TRUE(contains(xml, "  <qemu:commandline>\n"
                              "    <qemu:arg value='-trace'/>\n"
                              "    <qemu:arg value='events=/out/run/9p.trace.events'/>\n"
                              "    <qemu:arg value='-D'/>\n"
                              "    <qemu:arg value='/out/run/9p.trace'/>\n"
                              "  </qemu:commandline>\n</domain>\n"))
        << xml;
}

TEST(LibvirtXml, ScratchDiskOnlyWhenAsked) {
    GuestSpec spec = base_spec();
    EXPECT_FALSE(contains(libvirt_domain_xml(spec), "<disk"));
    spec.scratch_disk = "/out/run/scratch.img";
    std::string xml = libvirt_domain_xml(spec);
    EXPECT_TRUE(contains(xml, "<disk type='file' device='disk'>\n      <driver name='qemu' "
                              "type='raw'/>\n      <source file='/out/run/scratch.img'/>\n"
                              "      <target dev='vda' bus='virtio'/>\n"
                              "      <serial>rig-scratch</serial>\n    </disk>"))
        << xml;
}

TEST(LibvirtXml, PinnedGuestsGetCputuneForEveryVcpuAndTheEmulator) {
    GuestSpec spec = base_spec();
    EXPECT_FALSE(contains(libvirt_domain_xml(spec), "cputune"));
    spec.host_cpus = {2, 3};
    std::string xml = libvirt_domain_xml(spec);
    EXPECT_TRUE(contains(xml, "<vcpupin vcpu='0' cpuset='2-3'/>")) << xml;
    EXPECT_TRUE(contains(xml, "<vcpupin vcpu='1' cpuset='2-3'/>"));
    EXPECT_TRUE(contains(xml, "<emulatorpin cpuset='2-3'/>"));
}

TEST(LibvirtCapabilities, TopologyCellsSocketsAndCores) {
    const char* capabilities = R"(<capabilities>
  <host>
    <uuid>x</uuid>
    <topology>
      <cells num='2'>
        <cell id='0'>
          <memory unit='KiB'>1000</memory>
          <cpus num='2'>
            <cpu id='0' socket_id='0' die_id='0' core_id='0' siblings='0,2'/>
            <cpu id='2' socket_id='0' die_id='0' core_id='0' siblings='0,2'/>
          </cpus>
        </cell>
        <cell id='1'>
          <cpus num='1'>
            <cpu id='1' socket_id='1' die_id='0' core_id='4' siblings='1'/>
          </cpus>
        </cell>
      </cells>
    </topology>
  </host>
</capabilities>)";
    auto cpus = libvirt_host_cpus(capabilities);
    ASSERT_EQ(cpus.size(), 3u);
    EXPECT_EQ(cpus[1].id, 2);
    EXPECT_EQ(cpus[1].core, 0);
    EXPECT_EQ(cpus[2].id, 1);
    EXPECT_EQ(cpus[2].node, 1);
    EXPECT_EQ(cpus[2].package, 1);
    EXPECT_EQ(cpus[2].core, 4);
    EXPECT_TRUE(libvirt_host_cpus("<capabilities/>").empty());
    EXPECT_TRUE(libvirt_host_cpus("not xml").empty());
}
