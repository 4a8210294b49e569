// SPDX-License-Identifier: MIT
// What a workload produced, held against what it should be: its outputs as the guest saw
// them through its caches, as the server keeps them (the share on the host once the guest
// is gone; what a fuse cell's daemon serves from, hashed in the guest), and for a
// readback workload the content each file was written with. A file that differs, or is
// on one side only, is wrong output even where nothing printed an error.
#pragma once

#include "core/sample.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rig::run {

struct Manifest {
    std::map<std::string, std::string> files; // path beneath the share -> sha256, hex
    // False when lines are missing: cut at the protocol's cap, or not sha256sum's own. A
    // file on the other side only then proves nothing.
    bool whole = true;
};

// sha256sum's lines ("HEX  PATH"); `capped`: the text reached the protocol's cap.
Manifest parse_manifest(std::string_view text, bool capped);

// The regular files beneath `dir` whose path matches one of `globs` as the shell matches
// (fnmatch, '*' not across '/' nor onto a leading '.'), hashed. A symbolic link is never
// followed: the guest made them.
Expected<Manifest> hash_folder(const std::filesystem::path& dir,
                               const std::vector<std::string>& globs);

struct OutputCheck {
    size_t files = 0;                   // distinct paths held against each other
    std::vector<core::ErrorLine> wrong; // one per file that is not what it should be
};

// The guest's view against the server's (when known) and both against `expected` (path ->
// sha256, for files whose content is known).
OutputCheck check_outputs(const Manifest& guest, const std::optional<Manifest>& server,
                          const std::map<std::string, std::string>& expected);

// The wrong files into the sample: every one counts as an error, the first 20 become its
// error lines and lines of `text` (its note or evidence) under "HEADING (N of M files):".
void record_wrong(const OutputCheck& check, const std::string& heading, std::string& text,
                  core::Sample& sample);

// What is wrong at a check after a phase says so: "after build: " before each line and
// signature.
void place_after(OutputCheck& check, const std::string& phase);

// The two views of every check at once: `files` summed, `wrong` in check order.
void add_check(OutputCheck& into, OutputCheck check);

// A sample's kept manifests (core::Sample::outputs), by check (core::checks; "" the end's):
// the end's lines first, then each other check's under a line "# after PHASE". A sample
// that checks only at its end keeps sha256sum's lines alone.
std::string join_manifests(const std::map<std::string, std::string>& by_check);
std::map<std::string, std::string> split_manifests(std::string_view text);

// The guest's view against a reference sample's (`name` names it in the lines, not in
// their signatures): each file that differs, or that one has and the other not, is wrong.
OutputCheck check_against(const Manifest& guest, const Manifest& reference,
                          const std::string& name);

} // namespace rig::run
