// SPDX-License-Identifier: MIT
// Prebuilt kernels in the content-addressed cache: kernels/<id>/{vmlinuz or vmlinux,
// modules/, meta}.
#include "kernel/artifact.hpp"

#include "core/diagnostic.hpp"
#include "kernel/debian.hpp"
#include "proc/process.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace rig::kernel {

namespace fs = std::filesystem;

namespace {

Expected<proc::RunResult> run_checked(const std::vector<std::string>& argv, const fs::path& cwd,
                                      std::chrono::minutes timeout) {
    proc::RunOptions options;
    options.cwd = cwd;
    options.timeout = timeout;
    auto result = RIG_TRY(proc::run(argv, options));
    if (result.exit_code != 0)
        return fail(ErrorKind::infra,
                    util::join(argv, " ") + " failed (exit " + std::to_string(result.exit_code) +
                        "): " +
                        std::string(util::trim(result.err.substr(
                            result.err.size() > 2000 ? result.err.size() - 2000 : 0))));
    return result;
}

// meta is "key=value" lines of the artifact's fields; it records what the artifact is
// without a database, in a format every rig that shares the cache reads.
std::string meta_text(const Artifact& artifact) {
    std::string text;
    fields(artifact, [&](const char* name, const std::string& value) {
        text += std::string(name) + "=" + value + "\n";
    });
    return text;
}

// An artifact's image: its bzImage (vmlinuz), or the ELF vmlinux alone for a git kernel
// built for PVH (kernel/config.hpp, image_target); empty when the folder holds neither.
fs::path image_in(const fs::path& dir) {
    for (const char* name : {"vmlinuz", "vmlinux"})
        if (fs::is_regular_file(dir / name))
            return dir / name;
    return {};
}

Artifact load_artifact(const fs::path& dir) {
    Artifact artifact;
    artifact.id = dir.filename().string();
    artifact.image = image_in(dir);
    artifact.boot_image = extract_vmlinux(artifact.image).value_or(artifact.image);
    for (const std::string& line : util::split(util::read_file(dir / "meta"), '\n')) {
        size_t eq = line.find('=');
        if (eq == std::string::npos)
            continue;
        fields(artifact, [&](const char* name, std::string& value) {
            if (line.compare(0, eq, name) == 0)
                value = line.substr(eq + 1);
        });
    }
    if (!artifact.release.empty() &&
        fs::exists(dir / "lib/modules" / artifact.release / "modules.dep"))
        artifact.modules_dir = dir / "lib/modules" / artifact.release;
    return artifact;
}

// Moves an unpacked tree (vmlinuz or vmlinux, and lib/modules) into kernels/<id>, keyed by
// the image's content.
Expected<Artifact> adopt(const fs::path& staging, Artifact artifact, const fs::path& cache) {
    artifact.image_sha256 = RIG_TRY(util::sha256_file(image_in(staging)));
    artifact.id = artifact.image_sha256.substr(0, 16);
    RIG_TRY(util::write_file_atomically(staging / "meta", meta_text(artifact)));
    fs::path target = cache / "kernels" / artifact.id;
    std::error_code ec;
    if (fs::exists(target / "meta")) {
        fs::remove_all(staging, ec); // same content is already there
    } else {
        fs::remove_all(target, ec);
        fs::create_directories(target.parent_path(), ec);
        fs::rename(staging, target, ec);
        if (ec)
            return fail(ErrorKind::infra,
                        "cannot move kernel into " + target.string() + ": " + ec.message());
    }
    return load_artifact(target);
}

// depmod from PATH, else where kmod puts it: a normal user's PATH on Debian lacks /usr/sbin.
std::string depmod_program() {
    if (proc::find_program("depmod"))
        return "depmod";
    for (const char* path : {"/usr/sbin/depmod", "/sbin/depmod"})
        if (::access(path, X_OK) == 0)
            return path;
    return "depmod";
}

// Debian packages ship no modules.dep (their postinst runs depmod), so run it here.
Expected<void> ensure_depmod(const fs::path& root, const std::string& release) {
    if (fs::exists(root / "lib/modules" / release / "modules.dep"))
        return {};
    if (!fs::exists(root / "lib/modules" / release))
        return {};
    RIG_TRY(run_checked({depmod_program(), "-b", root.string(), release}, root,
                        std::chrono::minutes(5)));
    return {};
}

// An ELF file whose section headers end within it (a decompressor that stopped at
// trailing bytes still wrote all of it) and that carries the Xen PHYS32_ENTRY note QEMU
// needs to start it through PVH (CONFIG_PVH); without it the bzImage is booted.
bool is_pvh_elf(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    Elf64_Ehdr header{};
    if (!in.read(reinterpret_cast<char*>(&header), sizeof header) ||
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
        return false;
    std::error_code ec;
    auto size = fs::file_size(file, ec);
    if (ec || header.e_shoff + uint64_t(header.e_shnum) * header.e_shentsize > size)
        return false;
    constexpr uint32_t k_xen_elfnote_phys32_entry = 18;
    for (int i = 0; i < header.e_phnum; ++i) {
        Elf64_Phdr program{};
        in.seekg(static_cast<std::streamoff>(header.e_phoff + uint64_t(i) * header.e_phentsize));
        if (!in.read(reinterpret_cast<char*>(&program), sizeof program))
            return false;
        if (program.p_type != PT_NOTE || program.p_filesz > (1u << 20))
            continue;
        std::string notes(program.p_filesz, '\0');
        in.seekg(static_cast<std::streamoff>(program.p_offset));
        if (!in.read(notes.data(), static_cast<std::streamsize>(notes.size())))
            return false;
        for (size_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size();) {
            Elf64_Nhdr note{};
            std::memcpy(&note, notes.data() + at, sizeof note);
            size_t name_at = at + sizeof note;
            size_t desc_at = name_at + ((note.n_namesz + 3) & ~3u);
            if (note.n_type == k_xen_elfnote_phys32_entry && note.n_namesz == 4 &&
                name_at + 4 <= notes.size() && notes.compare(name_at, 3, "Xen") == 0)
                return true;
            at = desc_at + ((note.n_descsz + 3) & ~3u);
        }
    }
    return false;
}

} // namespace

std::optional<fs::path> extract_vmlinux(const fs::path& bzimage) {
    fs::path vmlinux = bzimage.parent_path() / "vmlinux";
    if (is_pvh_elf(vmlinux))
        return vmlinux;
    std::string image = util::read_file(bzimage);
    struct Format {
        std::string_view magic;
        std::vector<std::string> command;
    };
    const Format k_formats[] = {
        {{"\xfd"
          "7zXZ\0",
          6},
         {"xz", "-dc", "--single-stream"}},
        {"\x28\xb5\x2f\xfd", {"zstd", "-dcq"}},
        {"\x1f\x8b\x08", {"gzip", "-dc"}},
    };
    fs::path payload = vmlinux.string() + ".payload";
    fs::path partial = vmlinux.string() + ".tmp";
    std::error_code ec;
    for (const Format& format : k_formats) {
        size_t offset = image.find(format.magic);
        if (offset == std::string::npos)
            continue;
        {
            std::ofstream out(payload, std::ios::binary | std::ios::trunc);
            out.write(image.data() + offset, static_cast<std::streamsize>(image.size() - offset));
        }
        auto argv = format.command;
        argv.push_back(payload.string());
        proc::SpawnOptions options;
        options.stdout_file = partial;
        options.stderr_file = "/dev/null";
        // The decompressor may complain about the bytes after the stream; the check of
        // the ELF it wrote is what counts.
        if (auto child = proc::Child::spawn(argv, options))
            (*child)->wait_for(std::chrono::minutes(2));
        fs::remove(payload, ec);
        if (is_pvh_elf(partial)) {
            fs::rename(partial, vmlinux, ec);
            if (!ec)
                return vmlinux;
        }
        fs::remove(partial, ec);
    }
    return std::nullopt;
}

fs::path default_cache_dir() {
    if (const char* env = std::getenv("RIG_CACHE"); env && *env)
        return fs::absolute(env);
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return fs::path(xdg) / "rig";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "rig";
    return fs::absolute(fs::path("rig-results") / "cache");
}

namespace {

// Unpacks an image package's kernel and modules into the cache; `version` as apt gave it.
Expected<Artifact> unpack_deb(const fs::path& deb, const std::string& package,
                              const fs::path& cache, const Status& status) {
    fs::path staging = RIG_TRY(make_staging(cache));
    Artifact artifact;
    artifact.package = package;
    auto version = RIG_TRY(
        run_checked({"dpkg-deb", "-f", deb.string(), "Version"}, staging, std::chrono::minutes(1)));
    artifact.package_version = std::string(util::trim(version.out));
    fs::path tree = staging / "tree";
    if (status)
        status("unpacking " + package);
    RIG_TRY(run_checked({"dpkg-deb", "-x", deb.string(), tree.string()}, staging,
                        std::chrono::minutes(10)));
    fs::path image;
    for (const auto& entry : fs::directory_iterator(tree / "boot"))
        if (util::starts_with(entry.path().filename().string(), "vmlinuz-"))
            image = entry.path();
    if (image.empty())
        return fail(ErrorKind::infra, package + " has no boot/vmlinuz-*");
    artifact.release = image.filename().string().substr(std::string("vmlinuz-").size());
    RIG_TRY(ensure_depmod(tree, artifact.release));

    // Keep only what a guest needs: the image and the module tree.
    fs::path kept = staging / "kept";
    std::error_code ec;
    fs::create_directories(kept / "lib/modules", ec);
    fs::rename(image, kept / "vmlinuz", ec);
    if (!ec && fs::exists(tree / "lib/modules" / artifact.release))
        fs::rename(tree / "lib/modules" / artifact.release, kept / "lib/modules" / artifact.release,
                   ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot arrange " + kept.string() + ": " + ec.message());
    Artifact adopted = RIG_TRY(adopt(kept, artifact, cache));
    fs::remove_all(staging, ec);
    return adopted;
}

} // namespace

// Downloads `package` into cache/debs/PACKAGE/, where it stays until its kernel is in the
// cache. A .deb already there is used only when its sha256 is the archive's: a killed
// apt-get download leaves a partial file there, which is removed and fetched again,
// never unpacked.
Expected<fs::path> download_deb(const std::string& package, const fs::path& cache,
                                const Status& status) {
    const std::string expected = RIG_TRY(archive_sha256(package));
    fs::path folder = cache / "debs" / package;
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + folder.string() + ": " + ec.message());
    if (fs::path kept = util::file_with_extension(folder, ".deb"); !kept.empty()) {
        if (RIG_TRY(util::sha256_file(kept)) == expected)
            return kept;
        if (status)
            status("the downloaded " + kept.filename().string() +
                   " is not whole (an interrupted download?): fetching it again");
        fs::remove(kept, ec);
    }
    if (status)
        status("fetching " + package);
    RIG_TRY(run_checked({"apt-get", "download", package}, folder, std::chrono::minutes(20)));
    fs::path deb = util::file_with_extension(folder, ".deb");
    if (deb.empty())
        return fail(ErrorKind::infra, "apt-get download " + package + " left no .deb");
    if (RIG_TRY(util::sha256_file(deb)) != expected) {
        fs::remove(deb, ec);
        return fail(ErrorKind::infra, "apt-get download " + package +
                                          " gave a .deb whose sha256 is not the archive's");
    }
    return deb;
}

Expected<Artifact> fetch_debian(const std::string& name, const std::string& flavour,
                                const fs::path& cache, const Status& status) {
    // An exact name already fetched needs no archive: an old result reruns offline, and
    // after its package has left the archive, for as long as the cache keeps it.
    auto index_of = [&](const std::string& package) {
        return cache / "kernels" / "debian" / package;
    };
    if (!core::is_debian_series(name))
        if (auto cached = load_index(index_of(name), cache))
            return *cached;
    DebianPackage resolved = RIG_TRY(resolve_debian(name, flavour));
    if (status && resolved.package != name)
        status(name + " is " + resolved.package + " " + resolved.version);
    if (auto cached = load_index(index_of(resolved.package), cache))
        return *cached;
    fs::path deb = RIG_TRY(download_deb(resolved.package, cache, status));
    Artifact adopted = RIG_TRY(unpack_deb(deb, resolved.package, cache, status));
    fs::path index = index_of(resolved.package);
    std::error_code ec;
    fs::create_directories(index.parent_path(), ec);
    RIG_TRY(util::write_file_atomically(index, adopted.id + "\n"));
    // The kernel is in the cache now; the .deb would only double the space it takes.
    fs::remove_all(deb.parent_path(), ec);
    return adopted;
}

Expected<Artifact> take_image(const fs::path& image, const fs::path& modules,
                              const fs::path& cache) {
    if (!fs::is_regular_file(image))
        return fail(ErrorKind::config, "kernel image " + image.string() + " is not a file");
    fs::path staging = RIG_TRY(make_staging(cache));
    std::error_code ec;
    fs::copy_file(image, staging / "vmlinuz", ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot copy " + image.string() + ": " + ec.message());
    Artifact artifact;
    if (!modules.empty()) {
        if (!fs::is_directory(modules))
            return fail(ErrorKind::config,
                        "modules folder " + modules.string() + " is not a folder");
        artifact.release = modules.filename().string();
        fs::create_directories(staging / "lib/modules", ec);
        fs::copy(modules, staging / "lib/modules" / artifact.release,
                 fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
        if (ec)
            return fail(ErrorKind::infra, "cannot copy " + modules.string() + ": " + ec.message());
        RIG_TRY(ensure_depmod(staging, artifact.release));
    }
    return adopt(staging, artifact, cache);
}

Error locate(const Error& error, const core::Scenario& scenario, const core::Kernel& kernel) {
    if (error.kind != ErrorKind::config)
        return error;
    const std::string key = kernel.source == core::KernelSource::debian ? ".debian" : ".image";
    return Error{ErrorKind::config, core::located_message(scenario.file, kernel.loc,
                                                          kernel.path + key, error.message)};
}

Expected<fs::path> make_staging(const fs::path& cache) {
    fs::path dir =
        cache / "tmp" / ("k" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + dir.string() + ": " + ec.message());
    return dir;
}

Expected<Artifact> adopt_staged(const fs::path& staging, Artifact artifact, const fs::path& cache,
                                const fs::path& index) {
    Artifact adopted = RIG_TRY(adopt(staging, std::move(artifact), cache));
    std::error_code ec;
    fs::create_directories(index.parent_path(), ec);
    RIG_TRY(util::write_file_atomically(index, adopted.id + "\n"));
    return adopted;
}

std::optional<Artifact> load_index(const fs::path& index, const fs::path& cache) {
    if (!fs::is_regular_file(index))
        return std::nullopt;
    std::string id(util::trim(util::read_file(index)));
    fs::path dir = cache / "kernels" / id;
    if (id.empty() || !fs::exists(dir / "meta") || image_in(dir).empty())
        return std::nullopt;
    return load_artifact(dir);
}

Expected<Artifact> prebuilt(const core::Kernel& kernel, const fs::path& cache,
                            const Status& status) {
    switch (kernel.source) {
    case core::KernelSource::debian:
        return fetch_debian(kernel.package, kernel.flavour, cache, status);
    case core::KernelSource::image:
        return take_image(kernel.image, kernel.modules, cache);
    case core::KernelSource::git:
        break;
    }
    return fail(ErrorKind::usage,
                "kernel " + kernel.name + " is a git kernel: it is built, not fetched");
}

} // namespace rig::kernel
