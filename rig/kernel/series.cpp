// SPDX-License-Identifier: MIT
// A posted series split into its messages, and checked against the commit it applies to.
#include "kernel/series.hpp"

#include "proc/git.hpp"
#include "util/file.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

namespace rig::kernel {

namespace fs = std::filesystem;

namespace {

bool is_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
    });
}

// A line that begins a header field: "Name: value", the name without spaces.
bool is_header_line(std::string_view line) {
    size_t colon = line.find(':');
    return colon != std::string_view::npos && colon > 0 &&
           line.substr(0, colon).find_first_of(" \t") == std::string_view::npos;
}

// The header block, folded lines unfolded, names lower-cased; the first of each name.
std::map<std::string, std::string> headers_of(std::string_view message) {
    std::map<std::string, std::string> out;
    std::string name;
    size_t at = 0;
    bool first = true;
    while (at < message.size()) {
        size_t end = message.find('\n', at);
        std::string_view line =
            message.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
        at = end == std::string_view::npos ? message.size() : end + 1;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (first && util::starts_with(line, "From ")) {
            first = false;
            continue; // the mbox separator
        }
        first = false;
        if (line.empty())
            break;
        if ((line.front() == ' ' || line.front() == '\t') && !name.empty()) {
            out[name] += " " + std::string(util::trim(line));
            continue;
        }
        if (!is_header_line(line))
            break;
        size_t colon = line.find(':');
        name = std::string(line.substr(0, colon));
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (out.count(name))
            name = "\n"; // a repeated header: the first one counts
        else
            out[name] = std::string(util::trim(line.substr(colon + 1)));
    }
    out.erase("\n");
    return out;
}

std::string without_angles(std::string_view id) {
    id = util::trim(id);
    if (id.size() >= 2 && id.front() == '<' && id.back() == '>')
        id = id.substr(1, id.size() - 2);
    return std::string(id);
}

// n and N of the first "n/N" word among the subject's leading "[...]" tags.
std::optional<std::pair<int, int>> numbering(std::string_view subject) {
    subject = util::trim(subject);
    while (!subject.empty() && subject.front() == '[') {
        size_t close = subject.find(']');
        if (close == std::string_view::npos)
            break;
        for (const std::string& word : util::split(subject.substr(1, close - 1), ' ')) {
            size_t slash = word.find('/');
            if (slash == std::string::npos)
                continue;
            std::string n = word.substr(0, slash), total = word.substr(slash + 1);
            if (is_digits(n) && is_digits(total) && n.size() < 6 && total.size() < 6)
                return std::pair{std::atoi(n.c_str()), std::atoi(total.c_str())};
        }
        subject = util::trim(subject.substr(close + 1));
    }
    return std::nullopt;
}

std::string base_commit_of(std::string_view message) {
    std::string found;
    util::for_each_line(message, [&](std::string_view line) {
        if (found.empty() && util::starts_with(line, "base-commit:"))
            found = std::string(util::trim(line.substr(12)));
    });
    return found;
}

// "patch 2/3 '9p: always ask the server'", as errors name a patch.
std::string patch_label(const SeriesMail& patch) {
    return "patch " + std::to_string(patch.number) + "/" + std::to_string(patch.total) + " '" +
           patch.title() + "'";
}

} // namespace

std::string SeriesMail::title() const {
    std::string_view rest = util::trim(subject);
    while (!rest.empty() && rest.front() == '[') {
        size_t close = rest.find(']');
        if (close == std::string_view::npos)
            break;
        rest = util::trim(rest.substr(close + 1));
    }
    return std::string(rest);
}

std::string SeriesMail::file_name() const {
    std::string slug;
    for (char c : title()) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_')
            slug += c;
        else if (!slug.empty() && slug.back() != '-')
            slug += '-';
        if (slug.size() >= 52)
            break;
    }
    while (!slug.empty() && (slug.back() == '-' || slug.back() == '.'))
        slug.pop_back();
    std::string number = std::to_string(this->number);
    return std::string(4 - std::min<size_t>(4, number.size()), '0') + number + "-" + slug +
           ".patch";
}

SeriesMail read_mail(std::string text) {
    auto headers = headers_of(text);
    SeriesMail mail;
    mail.subject = headers["subject"];
    mail.message_id = without_angles(headers["message-id"]);
    mail.references = headers["references"];
    mail.from = headers["from"];
    mail.to = headers["to"];
    mail.cc = headers["cc"];
    mail.date = headers["date"];
    size_t start = text.find("\n\n");
    if (start != std::string::npos) {
        std::string body = text.substr(start + 2);
        // The message ends where the diffstat or the diff begins.
        for (std::string_view marker : {"\n---\n", "\ndiff --git "})
            if (size_t end = ("\n" + body).find(marker); end != std::string::npos)
                body = body.substr(0, end == 0 ? 0 : end - 1);
        mail.body = std::string(util::trim(body));
    }
    mail.text = std::move(text);
    return mail;
}

std::vector<std::string> split_mbox(std::string_view text) {
    std::vector<std::string> messages;
    std::string current;
    bool previous_blank = true;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        size_t next = end == std::string_view::npos ? text.size() : end + 1;
        std::string_view line = text.substr(at, next - at);
        // mbox: a message starts at a "From " line after a blank one (or the file's start);
        // "From " inside a body is quoted as ">From " by whoever wrote the file.
        if (previous_blank && util::starts_with(line, "From ") && !util::trim(current).empty()) {
            messages.push_back(std::move(current));
            current.clear();
        }
        current += line;
        previous_blank = util::trim(line).empty();
        at = next;
    }
    if (!util::trim(current).empty())
        messages.push_back(std::move(current));
    return messages;
}

Expected<Series> parse_series(const std::vector<std::string>& messages, const std::string& where) {
    std::vector<SeriesMail> mails;
    for (const std::string& text : messages) {
        SeriesMail mail = read_mail(text);
        if (mail.subject.empty())
            return fail(ErrorKind::config, where + ": message " + std::to_string(mails.size() + 1) +
                                               " has no Subject: it is not a patch mail");
        mails.push_back(std::move(mail));
    }
    size_t numbered = std::count_if(mails.begin(), mails.end(), [](const SeriesMail& mail) {
        return numbering(mail.subject).has_value();
    });
    Series series;
    if (numbered == 0) {
        // "[PATCH] ..." each, as `git format-patch` without -n writes them: in file order.
        for (size_t i = 0; i < mails.size(); ++i) {
            mails[i].number = static_cast<int>(i) + 1;
            mails[i].total = static_cast<int>(mails.size());
            series.patches.push_back(mails[i]);
        }
    } else {
        std::map<int, SeriesMail> by_number;
        int total = 0;
        for (SeriesMail& mail : mails) {
            auto number = numbering(mail.subject);
            if (!number)
                return fail(ErrorKind::config, where + ": '" + mail.subject +
                                                   "' has no [PATCH n/N] number, which the "
                                                   "series' other messages have");
            std::tie(mail.number, mail.total) = *number;
            if (total != 0 && mail.total != total)
                return fail(ErrorKind::config,
                            where + ": '" + mail.subject + "' is of a series of " +
                                std::to_string(mail.total) + ", the messages before it of " +
                                std::to_string(total) + ": two series in one file");
            total = mail.total;
            if (mail.number > total)
                return fail(ErrorKind::config, where + ": '" + mail.subject +
                                                   "' is numbered past " + std::to_string(total));
            if (by_number.count(mail.number))
                return fail(ErrorKind::config, where + ": two messages are numbered " +
                                                   std::to_string(mail.number) + "/" +
                                                   std::to_string(total));
            by_number.emplace(mail.number, mail);
        }
        for (auto& [number, mail] : by_number) {
            if (number == 0)
                series.cover = mail;
            else
                series.patches.push_back(mail);
        }
        for (int n = 1; n <= total; ++n)
            if (!by_number.count(n))
                return fail(ErrorKind::config, where + ": patch " + std::to_string(n) + "/" +
                                                   std::to_string(total) + " is missing");
    }
    if (series.patches.empty())
        return fail(ErrorKind::config, where + ": no patch, only a cover letter");
    // b4 and `git format-patch --base` write it into the cover letter, or without one
    // after the last patch.
    series.base_commit =
        base_commit_of(series.cover ? series.cover->text : series.patches.back().text);
    return series;
}

Expected<Series> read_series(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        std::vector<fs::path> files;
        for (const auto& entry : fs::directory_iterator(path, ec))
            if (entry.is_regular_file())
                files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        std::vector<std::string> messages;
        for (const fs::path& file : files)
            for (std::string& message : split_mbox(util::read_file(file)))
                messages.push_back(std::move(message));
        if (messages.empty())
            return fail(ErrorKind::config, "series " + path.string() + ": the folder is empty");
        return parse_series(messages, "series " + path.string());
    }
    if (!fs::is_regular_file(path, ec))
        return fail(ErrorKind::config, "series " + path.string() + " does not exist");
    return parse_series(split_mbox(util::read_file(path)), "series " + path.string());
}

namespace {

// The hunk of `patch` at `file`:`line` (git apply's "patch failed: FILE:LINE"), its
// header and at most a dozen lines of it.
std::string failing_hunk(const std::string& patch, const std::string& file,
                         const std::string& line) {
    size_t section = patch.find("diff --git a/" + file + " ");
    if (section == std::string::npos)
        return "";
    size_t hunk = patch.find("\n@@ -" + line + ",", section);
    if (hunk == std::string::npos)
        hunk = patch.find("\n@@ -" + line + " ", section);
    if (hunk == std::string::npos)
        return "";
    std::string out;
    size_t at = hunk + 1;
    for (int lines = 0; lines < 13 && at < patch.size(); ++lines) {
        size_t end = patch.find('\n', at);
        std::string text =
            patch.substr(at, end == std::string::npos ? std::string::npos : end - at);
        if (lines > 0 &&
            (util::starts_with(text, "@@") || util::starts_with(text, "diff ") || text == "-- "))
            break;
        out += "    " + text + "\n";
        if (end == std::string::npos)
            break;
        at = end + 1;
    }
    return out;
}

// Removes a folder of its own when the check ends, however it ends.
struct ScratchFolder {
    fs::path path;
    ~ScratchFolder() {
        std::error_code ec;
        if (!path.empty())
            fs::remove_all(path, ec);
    }
};

} // namespace

Expected<void> check_series_applies(const fs::path& repo, const std::string& commit,
                                    const std::vector<fs::path>& before, const Series& series,
                                    const std::string& where) {
    proc::RunOptions options;
    options.cwd = repo;
    options.timeout = std::chrono::minutes(5);
    auto git = [&](const std::vector<std::string>& args) -> Expected<proc::RunResult> {
        return proc::run_git(args, options);
    };
    auto common = RIG_TRY(git({"rev-parse", "--git-common-dir"}));
    if (common.exit_code != 0)
        return fail(ErrorKind::config, repo.string() + " is not a git repository");
    fs::path objects = fs::path(std::string(util::trim(common.out)));
    if (objects.is_relative())
        objects = repo / objects;
    objects = fs::weakly_canonical(objects / "objects");

    std::string pattern = (fs::temp_directory_path() / "rig-series-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        return fail(ErrorKind::infra, "cannot create a folder in " +
                                          fs::temp_directory_path().string() +
                                          " to check the series in");
    ScratchFolder scratch{pattern};
    fs::create_directories(scratch.path / "objects");
    // Blobs the patches make go to the scratch folder; the repository's are read through
    // the alternate.
    options.env = {{"GIT_INDEX_FILE", (scratch.path / "index").string()},
                   {"GIT_OBJECT_DIRECTORY", (scratch.path / "objects").string()},
                   {"GIT_ALTERNATE_OBJECT_DIRECTORIES", objects.string()}};
    auto read = RIG_TRY(git({"read-tree", commit}));
    if (read.exit_code != 0)
        return fail(ErrorKind::config, where + ": cannot read commit " + commit + ": " +
                                           std::string(util::trim(read.err)));
    for (const fs::path& patch : before) {
        // A patch of the kernel's own may be a mail without a diff, which `git am` takes.
        auto applied = RIG_TRY(git({"apply", "--cached", "--allow-empty", patch.string()}));
        if (applied.exit_code != 0)
            return fail(ErrorKind::config, "patch " + patch.string() + " does not apply to " +
                                               commit.substr(0, 12) + ": " +
                                               std::string(util::trim(applied.err)));
    }
    for (const SeriesMail& patch : series.patches) {
        fs::path file = scratch.path / patch.file_name();
        RIG_TRY(util::write_file_atomically(file, patch.text));
        auto applied = RIG_TRY(git({"apply", "--cached", file.string()}));
        if (applied.exit_code == 0)
            continue;
        std::string message(util::trim(applied.err + applied.out));
        std::string hunk;
        if (auto at = message.find("patch failed: "); at != std::string::npos) {
            std::string place = message.substr(at + 14, message.find('\n', at) - at - 14);
            if (auto colon = place.rfind(':'); colon != std::string::npos)
                hunk = failing_hunk(patch.text, place.substr(0, colon), place.substr(colon + 1));
        }
        return fail(ErrorKind::config,
                    where + ": " + patch_label(patch) + " (" + patch.file_name() +
                        ") does not apply to " + commit.substr(0, 12) +
                        (patch.number > 1 ? " with the patches before it" : "") + ": " + message +
                        (hunk.empty() ? "" : "\n  the hunk that failed:\n" + hunk));
    }
    return {};
}

} // namespace rig::kernel
