// SPDX-License-Identifier: MIT
// Kernel artifacts: a bootable image plus its modules, in a content-addressed cache.
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"
#include "util/fields.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace rig::kernel {

struct Artifact {
    std::string id; // first 16 hex digits of the image's sha256
    std::string image_sha256;
    // The kernel as built or fetched: a bzImage (vmlinuz), or for a git kernel built for
    // PVH the ELF vmlinux alone (kernel/config.hpp, image_target).
    std::filesystem::path image;
    // What guests boot: the ELF vmlinux (inside the bzImage, when it could be extracted)
    // when QEMU can start it through PVH, without firmware or in-guest decompression,
    // seconds faster under TCG; else the bzImage itself.
    std::filesystem::path boot_image;
    std::filesystem::path modules_dir; // lib/modules/RELEASE with modules.dep, or empty
    std::string release;               // uname -r of the kernel
    std::string package;               // Debian package name, when fetched from one
    std::string package_version;
};

// What the artifact's folder records of it, declared once (util/fields.hpp): its meta file
// holds these as key=value lines, and the database's row (run/kernel_records) takes the
// fields of the same names. The paths and id follow from the folder.
template <util::RecordOf<Artifact> A, class Visit> void fields(A& artifact, Visit&& visit) {
    visit("release", artifact.release);
    visit("package", artifact.package);
    visit("package_version", artifact.package_version);
    visit("image_sha256", artifact.image_sha256);
}

// Where kernels, initramfs images and build trees are kept between runs:
// $RIG_CACHE, else $XDG_CACHE_HOME/rig, else ~/.cache/rig.
std::filesystem::path default_cache_dir();

using Status = std::function<void(const std::string& phase)>;

// `debian: NAME`: a series, metapackage or exact package (kernel/debian.hpp) resolved to
// one exact package, then apt-get download + dpkg-deb -x, never installed. A second call
// for the same exact package is a cache hit with no download; the artifact's package
// and package_version say what was resolved.
Expected<Artifact> fetch_debian(const std::string& name, const std::string& flavour,
                                const std::filesystem::path& cache, const Status& status = {});

// Downloads exact package `package` with apt-get download into cache/debs/PACKAGE/ and
// returns the .deb, checked against the archive's sha256 (a partial one is fetched again).
Expected<std::filesystem::path>
download_deb(const std::string& package, const std::filesystem::path& cache, const Status& status);

// `image: PATH` with optional `modules: DIR`: copied into the cache by content.
Expected<Artifact> take_image(const std::filesystem::path& image,
                              const std::filesystem::path& modules,
                              const std::filesystem::path& cache);

// Extracts vmlinux from the bzImage next to it, once; nullopt when the payload's
// compression is not one rig knows (xz, zstd, gzip) or the result is not whole.
std::optional<std::filesystem::path> extract_vmlinux(const std::filesystem::path& bzimage);

// The artifact for a prebuilt kernel entry; git kernels come from kernel/build.hpp.
Expected<Artifact> prebuilt(const core::Kernel& kernel, const std::filesystem::path& cache,
                            const Status& status = {});

// A config error of fetching `kernel` (a Debian name apt does not know), located at the
// kernel's entry in the scenario file like every scenario error; other errors as they are.
Error locate(const Error& error, const core::Scenario& scenario, const core::Kernel& kernel);

// For builders: a fresh folder under cache/tmp to stage an artifact in.
Expected<std::filesystem::path> make_staging(const std::filesystem::path& cache);

// Moves a staged folder (vmlinuz or vmlinux or both, and lib/modules/RELEASE)
// into kernels/<id>, keyed by the image's content, and writes `index` naming that id, so
// that the next request finds it without building. `artifact` gives release and package.
Expected<Artifact> adopt_staged(const std::filesystem::path& staging, Artifact artifact,
                                const std::filesystem::path& cache,
                                const std::filesystem::path& index);

// The artifact an index file names, when the index and the artifact are both whole.
std::optional<Artifact> load_index(const std::filesystem::path& index,
                                   const std::filesystem::path& cache);

} // namespace rig::kernel
