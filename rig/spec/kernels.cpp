// SPDX-License-Identifier: MIT
// The `kernels:` list read into core::Kernel, one source per kernel.
#include "spec/kernels.hpp"

#include "core/diagnostic.hpp"
#include "spec/keys.hpp"
#include "spec/reader_context.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <map>

namespace rig::spec {

using core::Located;

namespace {

const std::vector<std::string> k_sources{"debian", "image", "git"};
const std::vector<std::string> k_git_only{"ref", "config", "patches", "series", "options"};

Expected<void> read_git_details(const Context& context, const std::vector<Entry>& entries,
                                core::Kernel& kernel) {
    for (const Entry& entry : entries) {
        if (entry.key == "ref") {
            kernel.ref =
                RIG_TRY(read_argument(context, entry.value, entry.path, "a git ref")).value;
        } else if (entry.key == "config") {
            if (entry.value.IsSequence() && entry.value.size() == 0)
                continue;
            for (Located fragment :
                 RIG_TRY(read_scalars(context, entry.value, entry.path, Shape::list)))
                kernel.config.push_back(
                    RIG_TRY(canonical_axis_value(context, "config", std::move(fragment))).value);
        } else if (entry.key == "patches") {
            kernel.patches = RIG_TRY(read_string_list(context, entry.value, entry.path));
        } else if (entry.key == "series") {
            kernel.series =
                RIG_TRY(read_scalar(context, entry.value, entry.path, "an mbox or a folder")).value;
        } else if (entry.key == "options") {
            for (const Entry& option :
                 RIG_TRY(read_map(context, entry.value, entry.path, nullptr))) {
                if (!util::starts_with(option.key, "CONFIG_") || option.key.size() == 7 ||
                    !is_word(option.key, "_", true) ||
                    std::any_of(option.key.begin(), option.key.end(),
                                [](char c) { return c >= 'a' && c <= 'z'; }))
                    return error_at(context, option.key_node, option.path,
                                    "kernel options are named CONFIG_[A-Z0-9_]+, got '" +
                                        option.key + "'");
                kernel.options[option.key] =
                    RIG_TRY(read_scalar(context, option.value, option.path, "a value (y, m, n)"))
                        .value;
            }
        }
    }
    return {};
}

// `flavour: cloud-amd64` picks the flavour a `debian:` series resolves to; an exact or
// metapackage name carries its flavour in itself.
Expected<void> read_flavour(const Context& context, const Entry& entry, core::Kernel& kernel) {
    if (kernel.source != core::KernelSource::debian || !core::is_debian_series(kernel.package))
        return error_at(context, entry.key_node, entry.path,
                        "'flavour' applies only to a Debian series such as "
                        "'debian: linux-image-6.1' (a package name carries its flavour)");
    kernel.flavour =
        RIG_TRY(read_argument(context, entry.value, entry.path, "a flavour (amd64)")).value;
    if (!is_word(kernel.flavour, "-", false))
        return error_at(context, entry.value, entry.path,
                        "flavours use only a-z, 0-9 and '-' (amd64, cloud-amd64), got '" +
                            kernel.flavour + "'");
    return {};
}

// `name_loc` receives where the name is written, for the duplicate-name message.
Expected<core::Kernel> read_kernel(const Context& context, const Item& item, core::Loc& name_loc) {
    std::vector<Entry> entries = RIG_TRY(read_map(context, item.node, item.path, &k_kernel_keys));
    core::Kernel kernel;
    kernel.loc = loc_of(item.node);
    kernel.path = item.path;

    const Entry* name = find_entry(entries, "name");
    if (!name)
        return error_at(context, item.node, child_path(item.path, "name"), "missing required key");
    Located name_value = RIG_TRY(read_scalar(context, name->value, name->path, "a name"));
    // Kernel names label report columns and artifact folders.
    if (!is_word(name_value.value, "._+-"))
        return error_at(context, name_value,
                        "kernel names use only letters, digits, '.', '_', '+' and '-', got '" +
                            name_value.value + "'");
    kernel.name = name_value.value;
    name_loc = name_value.loc;

    const Entry* source = nullptr;
    for (const Entry& entry : entries) {
        if (!contains(k_sources, entry.key))
            continue;
        if (source)
            return error_at(context, entry.key_node, entry.path,
                            "a kernel has exactly one source, but '" + source->key + "' and '" +
                                entry.key + "' are both given");
        source = &entry;
    }
    if (!source)
        return error_at(context, item.node, item.path,
                        "missing a source: give one of debian, image, git");

    if (source->key == "debian") {
        kernel.source = core::KernelSource::debian;
        kernel.package =
            RIG_TRY(read_argument(context, source->value, source->path, "a package name")).value;
        // apt-get receives it as one argument: a space or a capital is a typo.
        if (!is_word(kernel.package, "+.-", false))
            return error_at(context, source->value, source->path,
                            "Debian package names use only a-z, 0-9, '+', '.' and '-', got '" +
                                kernel.package + "'");
    } else if (source->key == "image") {
        kernel.source = core::KernelSource::image;
        kernel.image = RIG_TRY(read_scalar(context, source->value, source->path, "a path")).value;
    } else {
        kernel.source = core::KernelSource::git;
        // git is given it as an argument, so '-' is refused as for a ref.
        Located repo =
            RIG_TRY(read_argument(context, source->value, source->path, "a repository's path"));
        // git hands TRANSPORT::ADDRESS to a remote helper, and ext:: runs a command; rig's
        // git allows file, git, http, https and ssh only (proc/git.hpp).
        if (repo.value.find("::") != std::string::npos)
            return error_at(context, repo,
                            "git remote helpers (TRANSPORT::ADDRESS) are not allowed; give a "
                            "repository's path, got '" +
                                repo.value + "'");
        kernel.repo = repo.value;
    }

    for (const Entry& entry : entries) {
        if (contains(k_git_only, entry.key) && kernel.source != core::KernelSource::git)
            return error_at(context, entry.key_node, entry.path,
                            "'" + entry.key + "' applies only to git kernels (this one is '" +
                                source->key + "')");
        if (entry.key == "modules") {
            if (kernel.source != core::KernelSource::image)
                return error_at(context, entry.key_node, entry.path,
                                "'modules' applies only to image kernels (this one is '" +
                                    source->key + "')");
            kernel.modules = RIG_TRY(read_scalar(context, entry.value, entry.path, "a path")).value;
        }
        if (entry.key == "build") {
            if (kernel.source != core::KernelSource::image)
                return error_at(context, entry.key_node, entry.path,
                                "'build' applies only to image kernels (this one is '" +
                                    source->key + "'; rig knows where the others' trees are)");
            kernel.build = RIG_TRY(read_scalar(context, entry.value, entry.path, "a folder")).value;
        }
        if (entry.key == "flavour")
            RIG_TRY(read_flavour(context, entry, kernel));
    }
    if (kernel.source == core::KernelSource::git) {
        // A series may name its base (base-commit:), which the run checks when it begins.
        if (!find_entry(entries, "ref") && !find_entry(entries, "series"))
            return error_at(context, item.node, child_path(item.path, "ref"),
                            "missing required key (a git kernel needs a tag, branch or commit)");
        RIG_TRY(read_git_details(context, entries, kernel));
    }
    return kernel;
}

} // namespace

Expected<std::vector<core::Kernel>> read_kernels(const Context& context, const Entry& entry) {
    std::vector<Item> items = RIG_TRY(read_list(context, entry.value, entry.path));
    if (items.empty())
        return error_at(context, entry.value, entry.path,
                        "empty list; declare at least one kernel");
    std::vector<core::Kernel> kernels;
    std::map<std::string, int> first_line;
    for (const Item& item : items) {
        core::Loc name_loc;
        core::Kernel kernel = RIG_TRY(read_kernel(context, item, name_loc));
        auto [first, inserted] = first_line.emplace(kernel.name, name_loc.line);
        if (!inserted)
            return core::config_error(context.file, name_loc, child_path(item.path, "name"),
                                      "duplicate kernel name '" + kernel.name +
                                          "' (first at line " + std::to_string(first->second) +
                                          ")");
        kernels.push_back(std::move(kernel));
    }
    return kernels;
}

} // namespace rig::spec
