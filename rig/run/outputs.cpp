// SPDX-License-Identifier: MIT
// Manifests of a workload's outputs, and what differs between them.
#include "run/outputs.hpp"

#include "util/fd.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <set>
#include <sys/stat.h>

namespace rig::run {

namespace fs = std::filesystem;

namespace {

bool is_sha256(std::string_view text) {
    return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool matches(const std::vector<std::string>& globs, const std::string& path) {
    for (const std::string& glob : globs)
        if (::fnmatch(glob.c_str(), path.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0)
            return true;
    return false;
}

// Opened without following a link at its end; the folders above it the walk reached
// without following any, and nothing changes them once the guest is gone.
Expected<std::string> hash_regular_file(const fs::path& path) {
    util::Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid())
        return fail(ErrorKind::infra, "cannot open " + path.string());
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return fail(ErrorKind::infra, path.string() + " is not a regular file");
    return util::sha256_fd(fd.get());
}

core::ErrorLine wrong_line(const std::string& path, const std::string& what,
                           const std::string& detail) {
    // The signature leaves out the hashes, so that the same file gone wrong the same way
    // is one family from sample to sample.
    return {core::Severity::error, "outputs", "output " + path + ": " + what + detail,
            "output " + path + ": " + what};
}

} // namespace

Manifest parse_manifest(std::string_view text, bool capped) {
    Manifest manifest;
    manifest.whole = !capped;
    for (const std::string& line : util::split(std::string(text), '\n')) {
        if (line.empty())
            continue;
        // "HEX  PATH", or "HEX *PATH" in binary mode; a name sha256sum had to escape
        // starts the line with '\\' and is not read.
        if (line.size() < 67 || !is_sha256(line.substr(0, 64)) || line[64] != ' ' ||
            (line[65] != ' ' && line[65] != '*')) {
            manifest.whole = false;
            continue;
        }
        manifest.files[line.substr(66)] = line.substr(0, 64);
    }
    return manifest;
}

Expected<Manifest> hash_folder(const fs::path& dir, const std::vector<std::string>& globs) {
    Manifest manifest;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
    if (ec)
        return fail(ErrorKind::infra, "cannot read " + dir.string() + ": " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec)
            return fail(ErrorKind::infra, "cannot read " + dir.string() + ": " + ec.message());
        const fs::file_status status = it->symlink_status(ec);
        if (ec || !fs::is_regular_file(status))
            continue;
        const std::string path = it->path().lexically_relative(dir).string();
        if (!matches(globs, path))
            continue;
        manifest.files[path] = RIG_TRY(hash_regular_file(it->path()));
    }
    return manifest;
}

OutputCheck check_outputs(const Manifest& guest, const std::optional<Manifest>& server,
                          const std::map<std::string, std::string>& expected) {
    std::set<std::string> paths;
    for (const auto* files : {&guest.files, server ? &server->files : nullptr, &expected})
        if (files)
            for (const auto& [path, hash] : *files)
                paths.insert(path);
    OutputCheck check;
    check.files = paths.size();
    auto hash_in = [](const Manifest& manifest,
                      const std::string& path) -> std::optional<std::string> {
        auto it = manifest.files.find(path);
        return it == manifest.files.end() ? std::nullopt : std::optional(it->second);
    };
    for (const std::string& path : paths) {
        const auto seen = hash_in(guest, path);
        const auto kept = server ? hash_in(*server, path) : std::nullopt;
        const auto known = expected.find(path);
        if (known != expected.end()) {
            const std::string& want = known->second;
            if (seen && *seen != want)
                check.wrong.push_back(wrong_line(path,
                                                 "the guest reads other content than "
                                                 "was written",
                                                 " (" + util::short_sha(*seen) + ", written " +
                                                     util::short_sha(want) + ")"));
            else if (!seen && guest.whole)
                check.wrong.push_back(wrong_line(path, "the guest does not see it", ""));
            if (server && kept && *kept != want)
                check.wrong.push_back(wrong_line(path,
                                                 "the server keeps other content than "
                                                 "was written",
                                                 " (" + util::short_sha(*kept) + ", written " +
                                                     util::short_sha(want) + ")"));
            else if (server && !kept && server->whole)
                check.wrong.push_back(wrong_line(path, "the server does not have it", ""));
            continue;
        }
        if (!server)
            continue;
        if (seen && kept && *seen != *kept)
            check.wrong.push_back(wrong_line(path,
                                             "the guest sees other content than the "
                                             "server keeps",
                                             " (" + util::short_sha(*seen) + ", server " +
                                                 util::short_sha(*kept) + ")"));
        else if (seen && !kept && server->whole)
            check.wrong.push_back(wrong_line(path, "the server does not have it", ""));
        else if (!seen && kept && guest.whole)
            check.wrong.push_back(wrong_line(path, "the guest does not see it", ""));
    }
    return check;
}

void record_wrong(const OutputCheck& check, const std::string& heading, std::string& text,
                  core::Sample& sample) {
    text += heading + " (" + std::to_string(check.wrong.size()) + " of " +
            std::to_string(check.files) + " files):\n";
    constexpr size_t k_most_lines = 20;
    for (size_t i = 0; i < check.wrong.size(); ++i) {
        if (i < k_most_lines) {
            text += "  " + check.wrong[i].line + "\n";
            sample.lines.push_back(check.wrong[i]);
        }
        ++sample.error_count;
    }
}

void place_after(OutputCheck& check, const std::string& phase) {
    for (core::ErrorLine& line : check.wrong) {
        line.line = "after " + phase + ": " + line.line;
        line.signature = "after " + phase + ": " + line.signature;
    }
}

void add_check(OutputCheck& into, OutputCheck check) {
    into.files += check.files;
    for (core::ErrorLine& line : check.wrong)
        into.wrong.push_back(std::move(line));
}

namespace {
constexpr std::string_view k_check_heading = "# after ";
} // namespace

std::string join_manifests(const std::map<std::string, std::string>& by_check) {
    std::string text;
    if (auto end = by_check.find(""); end != by_check.end())
        text = end->second;
    for (const auto& [check, manifest] : by_check) {
        if (check.empty())
            continue;
        if (!text.empty() && text.back() != '\n')
            text += '\n';
        text += std::string(k_check_heading) + check + "\n" + manifest;
    }
    return text;
}

std::map<std::string, std::string> split_manifests(std::string_view text) {
    std::map<std::string, std::string> by_check;
    std::string* into = &by_check[""];
    for (const std::string& line : util::split(text, '\n')) {
        if (util::starts_with(line, k_check_heading)) {
            into = &by_check[line.substr(k_check_heading.size())];
            continue;
        }
        if (!line.empty())
            *into += line + "\n";
    }
    if (by_check[""].empty())
        by_check.erase("");
    return by_check;
}

OutputCheck check_against(const Manifest& guest, const Manifest& reference,
                          const std::string& name) {
    std::set<std::string> paths;
    for (const Manifest* manifest : {&guest, &reference})
        for (const auto& [path, hash] : manifest->files)
            paths.insert(path);
    OutputCheck check;
    check.files = paths.size();
    // The reference's name stays out of the signature, like the hashes.
    const std::string which = " (the reference: " + name + ")";
    for (const std::string& path : paths) {
        auto mine = guest.files.find(path), theirs = reference.files.find(path);
        if (mine != guest.files.end() && theirs != reference.files.end()) {
            if (mine->second != theirs->second)
                check.wrong.push_back(
                    wrong_line(path, "other content than the reference has",
                               " (" + util::short_sha(mine->second) + ", the reference " +
                                   util::short_sha(theirs->second) + ": " + name + ")"));
        } else if (mine == guest.files.end()) {
            check.wrong.push_back(wrong_line(path, "missing, though the reference has it", which));
        } else {
            check.wrong.push_back(wrong_line(path, "not in the reference", which));
        }
    }
    return check;
}

} // namespace rig::run
