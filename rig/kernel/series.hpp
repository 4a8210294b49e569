// SPDX-License-Identifier: MIT
// A posted patch series (`series:` of a git kernel): a b4-style mbox with a cover letter,
// or a folder of `git format-patch` files, split into its cover letter and its patches in
// order; and the check that it applies to a commit, made before anything is built.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rig::kernel {

// One message of the series, its headers as written (folded lines unfolded; encoded
// words kept, since a reply may carry them as they are).
struct SeriesMail {
    int number = 0; // n of "[PATCH n/N]"; 0 for the cover letter
    int total = 0;  // N; 1 for a lone "[PATCH]"
    std::string subject;
    std::string message_id; // without <>; "" when the message has none
    std::string references; // as written
    std::string from;
    std::string to;
    std::string cc;
    std::string date;
    std::string body; // after the headers, up to the "---" before the diff: the message
    std::string text; // the whole message: one mbox of its own, for `git am`
    // What `git am` takes for the commit's subject: the subject without its "[...]" tags.
    std::string title() const;
    // "0002-9p-always-ask-the-server.patch": a name as git format-patch would give it.
    std::string file_name() const;
};

struct Series {
    std::optional<SeriesMail> cover;
    std::vector<SeriesMail> patches; // in order, 1..N
    std::string base_commit;         // the cover letter's (or last patch's) base-commit: line
};

// One message's fields, as parse_series reads each (number and total left 0).
SeriesMail read_mail(std::string text);

// Splits an mbox's text into its messages, on "From " lines that start a message.
std::vector<std::string> split_mbox(std::string_view text);

// The series in `text` (what `where` names, for errors): a config error when it holds no
// patch, numbers one twice, misses one, or mixes series of different lengths.
Expected<Series> parse_series(const std::vector<std::string>& messages, const std::string& where);

// Reads `path`: an mbox file, or a folder whose files (in name order) are one message each.
Expected<Series> read_series(const std::filesystem::path& path);

// Whether the series' patches, in order, apply to `commit` of `repo` after the patch files
// `before` (the kernel's own): `git apply` against a private index and object folder, so
// that the repository is never written. A patch that does not apply is a config error
// naming it ("patch 2/3 'subject'") and the hunk that failed, as git reports it and as the
// patch has it.
Expected<void> check_series_applies(const std::filesystem::path& repo, const std::string& commit,
                                    const std::vector<std::filesystem::path>& before,
                                    const Series& series, const std::string& where);

} // namespace rig::kernel
