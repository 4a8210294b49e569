// SPDX-License-Identifier: MIT
#include "guest/root.hpp"

#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <unistd.h>

namespace rig::guest {

namespace fs = std::filesystem;

namespace {

// The top-level names a merged-/usr host links into /usr, the first two required.
constexpr const char* k_linked[] = {"bin", "sbin", "lib", "lib64", "lib32", "libx32"};
constexpr size_t k_required_links = 2;

bool system_id(std::string_view field) {
    unsigned long id = 0;
    auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), id);
    return error == std::errc() && end == field.data() + field.size() && (id < 1000 || id == 65534);
}

Expected<void> copy_entry(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
    if (ec)
        return fail(ErrorKind::infra,
                    "cannot copy " + from.string() + " for the guest root: " + ec.message());
    return {};
}

Expected<void> write(const fs::path& file, std::string_view text) {
    return util::write_file_atomically(file, text, util::Sync::skip);
}

Expected<void> fill_etc(const fs::path& host_etc, const fs::path& etc) {
    std::error_code ec;
    for (const char* name : k_etc_copied)
        if (fs::exists(fs::symlink_status(host_etc / name, ec)))
            RIG_TRY(copy_entry(host_etc / name, etc / name));
    RIG_TRY(write(etc / "passwd", system_accounts(util::read_file(host_etc / "passwd"))));
    RIG_TRY(write(etc / "group", system_accounts(util::read_file(host_etc / "group"))));
    RIG_TRY(write(etc / "hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n"));
    RIG_TRY(write(etc / "hostname", "rig-guest\n"));
    fs::create_symlink("../proc/self/mounts", etc / "mtab", ec);
    if (ec)
        return fail(ErrorKind::infra,
                    "cannot link " + (etc / "mtab").string() + ": " + ec.message());
    return {};
}

// What a copy holds, to name it: its entries' names, kinds and contents, sorted.
Expected<std::string> digest(const fs::path& folder) {
    std::vector<std::string> entries;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::string name = it->path().lexically_relative(folder).string();
        if (it->is_symlink())
            entries.push_back(name + " -> " + fs::read_symlink(it->path(), ec).string());
        else if (it->is_directory())
            entries.push_back(name + "/");
        else
            entries.push_back(name + " " + util::sha256_hex(util::read_file(it->path())));
    }
    if (ec)
        return fail(ErrorKind::infra, "cannot read " + folder.string() + ": " + ec.message());
    std::sort(entries.begin(), entries.end());
    return util::sha256_hex(util::join(entries, "\n")).substr(0, 16);
}

// The copy made in a folder of its own, then renamed to its digest's name; a copy of the
// same name (made before, or by another rig just now) is the same and is kept.
Expected<fs::path> make_etc(const fs::path& host_etc, const fs::path& cache_dir) {
    fs::path parent = cache_dir / "guest-root";
    fs::path staging = parent / (".etc-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(staging, ec);
    fs::create_directories(staging, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot create " + staging.string() + ": " + ec.message());
    fs::permissions(parent, fs::perms(0755), ec);
    auto filled = fill_etc(host_etc, staging);
    auto named = filled ? digest(staging) : Expected<std::string>(tl::unexpected(filled.error()));
    if (!named) {
        fs::remove_all(staging, ec);
        return tl::unexpected(named.error());
    }
    fs::path etc = parent / ("etc-" + *named);
    if (fs::is_directory(etc, ec)) {
        fs::remove_all(staging, ec);
        return etc;
    }
    fs::rename(staging, etc, ec);
    if (ec && !fs::is_directory(etc)) {
        fs::remove_all(staging, ec);
        return fail(ErrorKind::infra, "cannot make " + etc.string() + ": " + ec.message());
    }
    fs::remove_all(staging, ec);
    return etc;
}

} // namespace

std::string system_accounts(std::string_view text) {
    std::string out;
    for (const std::string& line : util::split(text, '\n')) {
        std::vector<std::string> fields = util::split(line, ':');
        if (fields.size() < 4 || !system_id(fields[2]))
            continue;
        fields[1] = "x";
        if (fields.size() == 4) // group: name, password, id, members
            fields[3].clear();
        out += util::join(fields, ":") + "\n";
    }
    return out;
}

Expected<GuestRoot> prepare_guest_root(const fs::path& cache_dir, const fs::path& host) {
    GuestRoot root;
    root.usr = host / "usr";
    std::error_code ec;
    for (size_t i = 0; i < std::size(k_linked); ++i) {
        fs::path entry = host / k_linked[i];
        if (fs::is_symlink(entry, ec)) {
            fs::path target = fs::read_symlink(entry, ec);
            std::string text = target.string();
            // Relative links into usr/ only: anything else would point past the root.
            if (ec || target.is_absolute() || text.rfind("usr/", 0) != 0 ||
                text.find("..") != std::string::npos)
                return fail(ErrorKind::infra, entry.string() + " links to " + text +
                                                  ", not into usr/: rig's guest root needs a "
                                                  "merged-/usr host");
            root.links.emplace_back(k_linked[i], text);
        } else if (i < k_required_links) {
            return fail(ErrorKind::infra, entry.string() +
                                              " is not a link into /usr: rig's guest root shares "
                                              "/usr alone, which needs a merged-/usr host (as "
                                              "Debian 12 is)");
        }
    }
    root.etc = RIG_TRY(make_etc(host / "etc", cache_dir));
    return root;
}

} // namespace rig::guest
