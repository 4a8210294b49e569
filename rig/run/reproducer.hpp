// SPDX-License-Identifier: MIT
// A sample's guest without rig, for a maintainer who wants to boot the same kernel with the
// same workload by hand. Each sample's folder keeps its recipe, written as it launches: a
// script with QEMU's command line over the reproducer's own file names, and where each of
// those files was. A report packs one sample's recipe with those files, the kernel's
// .config and a fresh work tree into a tarball next to its mail.
#pragma once

#include "core/scenario.hpp"
#include "util/error.hpp"
#include "vm/hypervisor.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace rig::run {

// A reproducer's file is the name of the folder it unpacks to and this.
inline constexpr std::string_view k_tarball_suffix = ".tar.gz";
// The folder the reproducer `file_name` unpacks to: the name without k_tarball_suffix.
std::string reproducer_folder(const std::string& file_name);

// The recipe's two files in a sample's folder.
inline constexpr const char* k_recipe_script = "reproduce.sh";
inline constexpr const char* k_recipe_files = "reproduce.files";

// The name the kernel `image` has in the reproducer's folder: `vmlinux` for the ELF
// vmlinux of a git kernel built for PVH, `bzImage` for any other.
std::string reproducer_kernel_name(const std::filesystem::path& image);

// The spec as the reproducer's folder has it: the kernel as `kernel`
// (reproducer_kernel_name), `initrd.cpio`, rig's copy of /etc as `etc/`, the work share
// `work/`, the logs in the folder itself; the host's /usr and a scenario's host paths as
// they are; no request trace (its counts are rig's, read from a log a person does not
// need).
vm::GuestSpec reproducer_spec(const vm::GuestSpec& spec, const std::string& kernel);

// The script that boots reproducer_spec(spec, kernel) from the reproducer's folder: a
// fresh copy of `work.orig/` as the work share, virtiofsd first for a virtiofs cell, then
// QEMU.
std::string reproducer_script(const vm::GuestSpec& spec, const std::string& kernel);

// Writes the recipe of the sample whose guest is `spec` into `dir`: the script, and the
// host files it needs (`image`, the artifact's kernel: a bzImage, which QEMU boots as it
// boots the ELF vmlinux rig starts at its PVH entry, or that vmlinux itself).
Expected<void> write_recipe(const vm::GuestSpec& spec, const std::filesystem::path& image,
                            const std::filesystem::path& dir);

struct ReproducerParts {
    std::filesystem::path sample_dir; // the sample whose guest it boots
    core::Workload workload;          // its work tree, made afresh as for a sample
    std::string kernel_config;        // "": the config kept beside the kernel, if any
    std::string about;                // what it reproduces: the README's first lines
};

// The tarball: a folder named reproducer_folder(its name) holding run.sh, the kernel,
// initrd.cpio, etc/, work.orig/, config and README. Written whole, then renamed into
// place, so that a kill never leaves half of one.
Expected<void> write_reproducer(const ReproducerParts& parts, const std::filesystem::path& tarball);

} // namespace rig::run
