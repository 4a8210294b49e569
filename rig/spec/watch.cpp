// SPDX-License-Identifier: MIT
// The `watch:` key, read with located errors like every other key. The criteria are the
// bisect's and are parsed there (watch/); here they are kept with their places.
#include "spec/watch.hpp"

#include "spec/keys.hpp"
#include "spec/reader_context.hpp"
#include "util/units.hpp"

#include <chrono>

namespace rig::spec {

using core::Located;

namespace {

// The git kernel the watch follows: the one named, or the scenario's only git kernel.
Expected<std::string> followed_kernel(const Context& context, const Entry& entry,
                                      const std::optional<Located>& named,
                                      const std::vector<core::Kernel>& kernels) {
    std::vector<std::string> git_kernels;
    for (const core::Kernel& kernel : kernels)
        if (kernel.source == core::KernelSource::git)
            git_kernels.push_back(kernel.name);
    if (named) {
        if (!contains(git_kernels, named->value))
            return error_at(context, *named,
                            git_kernels.empty()
                                ? "a watch follows a git kernel, and the scenario has none"
                                : unknown("git kernel", named->value, git_kernels));
        return named->value;
    }
    if (git_kernels.size() != 1)
        return error_at(context, entry.key_node, child_path(entry.path, "kernel"),
                        git_kernels.empty()
                            ? "a watch follows a git kernel, and the scenario has none"
                            : "the scenario has several git kernels; name the one to follow");
    return git_kernels.front();
}

// An address as a mail header holds it: "Name <user@host>" or "user@host", one line.
Expected<std::string> read_address(const Context& context, const Entry& key) {
    Located value = RIG_TRY(read_scalar(context, key.value, key.path, "a mail address"));
    const std::string& text = value.value;
    if (text.find('@') == std::string::npos || text.find_first_of("\r\n,") != std::string::npos)
        return error_at(context, value,
                        "expected one mail address such as 'rig <rig@example.org>', got '" + text +
                            "'");
    return text;
}

} // namespace

Expected<core::Watch> read_watch(const Context& context, const Entry& entry,
                                 const std::vector<core::Kernel>& kernels) {
    core::Watch watch;
    watch.loc = loc_of(entry.key_node);
    std::vector<Entry> keys = RIG_TRY(read_map(context, entry.value, entry.path, &k_watch_keys));
    std::optional<Located> named;
    if (const Entry* kernel = find_entry(keys, "kernel"))
        named = RIG_TRY(read_scalar(context, kernel->value, kernel->path, "a kernel name"));
    watch.kernel = RIG_TRY(followed_kernel(context, entry, named, kernels));
    const Entry* branch = find_entry(keys, "branch");
    if (!branch)
        return error_at(context, entry.value, child_path(entry.path, "branch"),
                        "missing required key: the branch to follow");
    for (const Entry& key : keys) {
        if (key.key == "repo") {
            watch.repo = RIG_TRY(read_argument(context, key.value, key.path, "a repository")).value;
        } else if (key.key == "branch") {
            Located value = RIG_TRY(read_argument(context, key.value, key.path, "a branch"));
            // A branch name, not a revision expression: it becomes part of a ref rig writes.
            if (!is_word(value.value, "._-/") || value.value.find("..") != std::string::npos)
                return error_at(context, value,
                                "a branch name uses letters, digits, '.', '_', '-' and '/', got '" +
                                    value.value + "'");
            watch.branch = value.value;
        } else if (key.key == "interval") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a duration"));
            watch.interval = std::chrono::duration_cast<std::chrono::seconds>(
                RIG_TRY(duration_of(context, text, "10m", std::chrono::seconds(1))));
        } else if (key.key == "criteria") {
            watch.criteria =
                RIG_TRY(read_scalars(context, key.value, key.path, Shape::scalar_or_list));
        } else if (key.key == "paths") {
            for (const Located& path :
                 RIG_TRY(read_scalars(context, key.value, key.path, Shape::scalar_or_list))) {
                if (path.value.front() == '-' || path.value.front() == ':')
                    return error_at(context, path,
                                    "a path of the tree such as fs/9p, got '" + path.value + "'");
                watch.paths.push_back(path.value);
            }
        } else if (key.key == "reference") {
            watch.reference =
                RIG_TRY(read_argument(context, key.value, key.path, "a revision")).value;
        } else if (key.key == "samples") {
            watch.samples =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 1, 100)));
        } else if (key.key == "max_bisect_samples") {
            watch.max_bisect_samples =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 2, 1000)));
        } else if (key.key == "max_bisect_builds") {
            watch.max_bisect_builds =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 1, 100000)));
        } else if (key.key == "max_bisect_boots") {
            watch.max_bisect_boots =
                static_cast<int>(RIG_TRY(read_integer(context, key.value, key.path, 1, 1000000)));
        } else if (key.key == "max_bisect_time") {
            Located text = RIG_TRY(read_scalar(context, key.value, key.path, "a duration"));
            watch.max_bisect_time = std::chrono::duration_cast<std::chrono::seconds>(
                RIG_TRY(duration_of(context, text, "6h", std::chrono::minutes(1))));
        } else if (key.key == "dashboard") {
            watch.dashboard = RIG_TRY(read_scalar(context, key.value, key.path, "a folder")).value;
        } else if (key.key == "outbox") {
            watch.outbox = RIG_TRY(read_scalar(context, key.value, key.path, "a folder")).value;
        } else if (key.key == "send") {
            for (const Located& word :
                 RIG_TRY(read_scalars(context, key.value, key.path, Shape::list)))
                watch.send.push_back(word.value);
        } else if (key.key == "from") {
            watch.from = RIG_TRY(read_address(context, key));
        } else if (key.key == "cc") {
            for (const Located& item :
                 RIG_TRY(read_scalars(context, key.value, key.path, Shape::scalar_or_list))) {
                if (item.value.find('@') == std::string::npos ||
                    item.value.find_first_of("\r\n,") != std::string::npos)
                    return error_at(context, item,
                                    "expected one mail address per item, got '" + item.value + "'");
                watch.cc.push_back(item.value);
            }
        } else if (key.key == "archive") {
            Located value = RIG_TRY(read_scalar(context, key.value, key.path, "a URL"));
            if (value.value.rfind("https://", 0) != 0 && value.value.rfind("http://", 0) != 0)
                return error_at(context, value,
                                "expected the list archive's URL, such as "
                                "https://lore.kernel.org/r, got '" +
                                    value.value + "'");
            watch.archive = value.value;
        }
    }
    if (watch.outbox.empty())
        watch.outbox = "outbox";
    if (watch.from.empty())
        watch.from = "rig <rig@localhost>";
    if (watch.criteria.empty())
        watch.criteria.push_back(Located{"errors", watch.loc, child_path(entry.path, "criteria")});
    return watch;
}

} // namespace rig::spec
