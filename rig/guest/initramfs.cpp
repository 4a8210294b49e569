// SPDX-License-Identifier: MIT
// The base initramfs.
#include "guest/initramfs.hpp"

#include "guest/cpio.hpp"
#include "guest/modules.hpp"
#include "proc/process.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

extern const char rig_guest_init[];

namespace rig::guest {

namespace fs = std::filesystem;

namespace {

// Bump when the layout changes, so that cached archives are rebuilt.
constexpr const char* k_layout_version = "7";

fs::path find_busybox() {
    for (const char* candidate : {"/bin/busybox", "/usr/bin/busybox"})
        if (fs::exists(candidate))
            return candidate;
    return {};
}

Expected<std::string> module_bytes(const fs::path& file) {
    std::string name = file.filename().string();
    std::vector<std::string> argv;
    // busybox insmod takes plain ELF: decompress here, once per cached archive.
    if (name.ends_with(".xz"))
        argv = {"xz", "-dc", file.string()};
    else if (name.ends_with(".zst"))
        argv = {"zstd", "-qdc", file.string()};
    else if (name.ends_with(".gz"))
        argv = {"gzip", "-dc", file.string()};
    if (argv.empty()) {
        std::ifstream in(file, std::ios::binary);
        std::ostringstream out;
        out << in.rdbuf();
        if (!in)
            return fail(ErrorKind::infra, "cannot read " + file.string());
        return out.str();
    }
    proc::RunOptions options;
    options.max_output = 256 << 20;
    options.timeout = std::chrono::minutes(2);
    auto result = RIG_TRY(proc::run(argv, options));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra, "cannot decompress " + file.string() + ": " + result.err);
    return result.out;
}

std::string strip_compression(std::string path) {
    for (const char* suffix : {".xz", ".zst", ".gz"})
        if (path.ends_with(suffix))
            return path.substr(0, path.size() - std::string(suffix).size());
    return path;
}

// A load-order file for the agent: one module path a line (as the archive holds it,
// uncompressed), a "-" line after each wave but the last (guests/README.md).
std::string module_list(const std::vector<std::vector<std::string>>& waves) {
    std::string list;
    for (const auto& wave : waves) {
        if (!list.empty())
            list += "-\n";
        for (const std::string& module : wave)
            list += strip_compression(module) + "\n";
    }
    return list;
}

void add_parents(CpioWriter& cpio, std::set<std::string>& made, const std::string& path) {
    for (size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
        std::string dir = path.substr(0, slash);
        if (made.insert(dir).second)
            cpio.add_directory(dir);
    }
}

Expected<std::vector<std::string>> module_paths(const kernel::Artifact& kernel,
                                                const ModuleIndex& index, const ModuleSet& set) {
    std::set<std::string> known;
    for (const auto& entry : index.deps)
        known.insert(module_name(entry.first));
    std::vector<std::string> wanted = set.required;
    for (const auto& name : set.optional)
        if (known.count(name))
            wanted.push_back(name);
    auto order = load_order(index, wanted);
    if (!order)
        return fail(ErrorKind::infra, "kernel " + kernel.release + ": " + order.error().message);
    return order;
}

// The workload's /dev, bind-mounted by the agent: what a compile needs, and neither the
// console nor the result channel, so a workload cannot forge records.
void add_guest_dev(CpioWriter& cpio) {
    cpio.add_directory("rigdev");
    struct Node {
        const char* name;
        uint32_t major, minor;
    };
    for (const Node& node :
         {Node{"null", 1, 3}, Node{"zero", 1, 5}, Node{"full", 1, 7}, Node{"random", 1, 8},
          Node{"urandom", 1, 9}, Node{"tty", 5, 0}, Node{"fuse", 10, 229}})
        cpio.add_char_device(std::string("rigdev/") + node.name, node.major, node.minor, 0666);
    cpio.add_symlink("rigdev/fd", "/proc/self/fd");
    cpio.add_symlink("rigdev/stdin", "/proc/self/fd/0");
    cpio.add_symlink("rigdev/stdout", "/proc/self/fd/1");
    cpio.add_symlink("rigdev/stderr", "/proc/self/fd/2");
    cpio.add_symlink("rigdev/ptmx", "pts/ptmx");
    cpio.add_directory("rigdev/pts");
    cpio.add_directory("rigdev/shm", 01777);
}

} // namespace

ModuleSet guest_modules(const core::Filesystem& fs, core::Machine machine) {
    // pvpanic-mmio is also the driver of the ISA device that ACPI lists (QEMU0001).
    ModuleSet set = machine == core::Machine::microvm
                        ? ModuleSet{{"virtio_mmio", "9pnet_virtio", "9p"}, {"pvpanic_mmio"}}
                        : ModuleSet{{"virtio_pci", "9pnet_virtio", "9p"}, {"pvpanic_pci"}};
    set.required.insert(set.required.end(), fs.modules.begin(), fs.modules.end());
    return set;
}

std::string module_list_path(const core::Filesystem& fs, core::Machine machine) {
    std::string path = "/etc/rig/modules-" + std::string(fs.name);
    return machine == core::Machine::microvm ? path + "-microvm" : path;
}

bool kernel_boots_microvm(const kernel::Artifact& kernel) {
    if (kernel.package.empty() || kernel.modules_dir.empty())
        return false;
    // Asked for every sample: a search of the two files' text, not a parse of the index.
    // Both name a module by its path, ".../virtio_mmio.ko" (".ko.xz" and the like in
    // modules.dep).
    for (const char* file : {"modules.dep", "modules.builtin"}) {
        std::error_code ec;
        if (fs::exists(kernel.modules_dir / file, ec) &&
            util::read_file(kernel.modules_dir / file).find("/virtio_mmio.ko") != std::string::npos)
            return true;
    }
    return false;
}

const ModuleSet& scratch_modules() {
    // Optional: a kernel with virtio_blk built in (rig's git kernels) needs nothing, and
    // one without it at all fails only the cells that ask for a disk, in the guest.
    static const ModuleSet k_scratch{{}, {"virtio_blk"}};
    return k_scratch;
}

std::string_view agent_script() {
    return rig_guest_init;
}

Expected<fs::path> base_initramfs(const kernel::Artifact& kernel, const fs::path& cache) {
    fs::path busybox = find_busybox();
    if (busybox.empty())
        return fail(ErrorKind::infra, "busybox not found (install busybox-static)");
    // One load order per filesystem and machine; the archive holds the union of their
    // modules.
    std::map<std::string, std::string> lists;
    std::string scratch_list;
    std::set<std::string> modules;
    if (!kernel.modules_dir.empty()) { // else everything needed must be built in
        auto index = RIG_TRY(read_module_index(kernel.modules_dir));
        auto list_of = [&](const ModuleSet& set) -> Expected<std::string> {
            std::vector<std::string> order = RIG_TRY(module_paths(kernel, index, set));
            modules.insert(order.begin(), order.end());
            return module_list(load_waves(index, order));
        };
        std::vector<core::Machine> machines{core::Machine::q35};
        if (kernel_boots_microvm(kernel))
            machines.push_back(core::Machine::microvm);
        for (core::Machine machine : machines)
            for (const core::Filesystem* fs : core::filesystems())
                lists[module_list_path(*fs, machine)] =
                    RIG_TRY(list_of(guest_modules(*fs, machine)));
        scratch_list = RIG_TRY(list_of(scratch_modules()));
    }
    std::string key =
        util::sha256_hex(std::string(k_layout_version) + "\n" + kernel.id + "\n" +
                         util::join({modules.begin(), modules.end()}, "\n") + "\n" +
                         RIG_TRY(util::sha256_file(busybox)) + "\n" + std::string(agent_script()));
    fs::path out = cache / "initramfs" / (key.substr(0, 16) + ".cpio");
    if (fs::exists(out))
        return out;

    CpioWriter cpio;
    std::set<std::string> made;
    for (const char* dir : {"bin", "sbin", "usr", "usr/bin", "usr/sbin", "dev", "proc", "sys",
                            "tmp", "run", "etc", "etc/rig", "lib", "newroot"})
        if (made.insert(dir).second)
            cpio.add_directory(dir);
    cpio.add_char_device("dev/console", 5, 1);
    cpio.add_char_device("dev/null", 1, 3, 0666);
    add_guest_dev(cpio);
    RIG_TRY(cpio.add_file_from("bin/busybox", busybox, 0755));
    proc::RunOptions options;
    options.timeout = std::chrono::seconds(30);
    auto applets = RIG_TRY(proc::run({busybox.string(), "--list-full"}, options));
    for (const std::string& applet : util::split(applets.out, '\n')) {
        std::string path(util::trim(applet));
        if (path.empty() || path == "bin/busybox" || path.find("..") != std::string::npos)
            continue;
        add_parents(cpio, made, path);
        cpio.add_symlink(path, "/bin/busybox");
    }
    cpio.add_file("init", std::string(agent_script()), 0755);

    // Debian's kernels never enforce module signatures without Secure Boot, which rig's
    // guests do not have: their modules go unsigned and load faster. Other kernels may
    // enforce them (CONFIG_MODULE_SIG_FORCE) and keep theirs.
    bool unsigned_modules = !kernel.package.empty();
    for (const std::string& module : modules) {
        std::string path = "lib/modules/" + kernel.release + "/" + strip_compression(module);
        add_parents(cpio, made, path);
        std::string bytes = RIG_TRY(module_bytes(kernel.modules_dir / module));
        cpio.add_file(path, unsigned_modules ? std::string(without_signature(bytes)) : bytes);
    }
    if (lists.empty()) // everything built in: empty lists, nothing to load
        for (const core::Filesystem* fs : core::filesystems())
            lists[module_list_path(*fs, core::Machine::q35)];
    for (const auto& [path, list] : lists)
        cpio.add_file(path.substr(1), list);
    cpio.add_file(std::string(k_scratch_module_list).substr(1), scratch_list);

    std::error_code ec;
    fs::create_directories(out.parent_path(), ec);
    fs::path temporary = out.string() + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        file << cpio.finish();
        if (!file)
            return fail(ErrorKind::infra, "cannot write " + temporary.string());
    }
    fs::rename(temporary, out, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot write " + out.string() + ": " + ec.message());
    return out;
}

Expected<void> write_sample_initrd(const fs::path& base, const std::string& job_cpio,
                                   const fs::path& out) {
    std::error_code ec;
    fs::copy_file(base, out, fs::copy_options::overwrite_existing, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot copy " + base.string() + ": " + ec.message());
    std::ofstream file(out, std::ios::binary | std::ios::app);
    file << job_cpio;
    if (!file)
        return fail(ErrorKind::infra, "cannot write " + out.string());
    return {};
}

} // namespace rig::guest
