// SPDX-License-Identifier: MIT
// Error lines and signatures. Plain substring tests, not regexes: a workload may print
// megabytes, and this runs over all of it.
#include "core/evidence.hpp"

#include "core/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <vector>

namespace rig::core {

namespace {

bool contains(std::string_view line, std::string_view needle) {
    return line.find(needle) != std::string_view::npos;
}

bool contains_any(std::string_view line, std::initializer_list<std::string_view> needles) {
    for (auto needle : needles)
        if (contains(line, needle))
            return true;
    return false;
}

// "[   12.345678] " printk timestamps and a "<4>" priority prefix carry no meaning here.
std::string_view strip_prefixes(std::string_view line) {
    if (line.size() > 2 && line[0] == '<' && std::isdigit(static_cast<unsigned char>(line[1])) &&
        line[2] == '>')
        line.remove_prefix(3);
    if (!line.empty() && line[0] == '[') {
        size_t close = line.find(']');
        if (close != std::string_view::npos && close < 20)
            line.remove_prefix(close + 1);
    }
    while (!line.empty() && line[0] == ' ')
        line.remove_prefix(1);
    return line;
}

bool is_filesystem_line(std::string_view line) {
    for (const Filesystem* fs : filesystems())
        for (std::string_view word : fs->log_words)
            if (contains(line, word))
                return true;
    return false;
}

bool says_error(std::string_view line) {
    return contains_any(line, {"error", "Error", "ERROR", "fail", "Fail", "invalid"});
}

bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_hex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

} // namespace

std::optional<Severity> classify_line(std::string_view raw) {
    std::string_view line = strip_prefixes(raw);
    if (line.empty())
        return std::nullopt;
    if (contains_any(line, {"Kernel panic", "BUG:", "kernel BUG at", "Oops:", "Oops#",
                            "general protection fault", "Unable to handle kernel", "watchdog: BUG",
                            "INFO: task"}))
        return Severity::error;
    if (contains_any(line, {"WARNING:", "Call Trace:", "------------[ cut here ]"}))
        return contains(line, "cut here") ? std::nullopt : std::optional(Severity::warning);
    if (contains_any(line, {"Bad file descriptor", "Input/output error", "I/O error",
                            "Stale file handle", "Transport endpoint is not connected"}))
        return Severity::error;
    // Compiler and make diagnostics.
    if (contains_any(line, {": error:", "fatal error:", "undefined reference to", "make: ***",
                            "make[1]: ***", "Segmentation fault"}))
        return Severity::error;
    if (contains(line, ": warning:"))
        return Severity::warning;
    // Filesystem and transport subsystems print progress at info level too ("9pnet:
    // Installing ..."); on the console, without levels, only their errors count.
    if (is_filesystem_line(line) && says_error(line))
        return Severity::error;
    return std::nullopt;
}

std::optional<Severity> classify_kernel_line(int level, std::string_view line) {
    // KERN_NOTICE and below: boot chatter, however alarming it sounds. The kernel
    // announces a power-off at KERN_EMERG; that is the agent's normal end.
    if (level > 4 || util::starts_with(strip_prefixes(line), "reboot: "))
        return std::nullopt;
    if (auto severity = classify_line(line))
        return severity;
    // Only the subsystems rig tests count by level. Other error- and warn-level lines on
    // emulated hardware are firmware noise that moves with host load ("MP-BIOS bug:
    // 8254 timer not connected to IO-APIC", MTRR, unstable clock) and would make
    // identical kernels differ.
    if (is_filesystem_line(strip_prefixes(line)))
        return level <= 3 ? Severity::error : Severity::warning;
    return std::nullopt;
}

std::string signature_of(std::string_view raw) {
    std::string_view line = strip_prefixes(raw);
    std::string out;
    out.reserve(line.size());
    size_t i = 0;
    while (i < line.size() && out.size() < 240) {
        char c = line[i];
        bool word_start = i == 0 || !is_word_char(line[i - 1]);
        if (word_start && c == '0' && i + 1 < line.size() &&
            (line[i + 1] == 'x' || line[i + 1] == 'X')) {
            i += 2;
            while (i < line.size() && is_hex(line[i]))
                ++i;
            out += "0x?";
            continue;
        }
        if (word_start && is_hex(c)) {
            // A run of hex digits of 8 or more is an address or a hash, whatever it starts with.
            size_t end = i;
            while (end < line.size() && is_hex(line[end]))
                ++end;
            bool digits_only = true;
            for (size_t k = i; k < end; ++k)
                digits_only &= std::isdigit(static_cast<unsigned char>(line[k])) != 0;
            if ((end - i >= 8 || digits_only) && (end == line.size() || !is_word_char(line[end]))) {
                out += digits_only && end - i < 8 ? "N" : "?";
                i = end;
                continue;
            }
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])))
                ++i;
            out += 'N';
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            if (!out.empty() && out.back() != ' ')
                out += ' ';
            ++i;
            continue;
        }
        out += c;
        ++i;
    }
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out;
}

namespace {

// Characters of a path or file name as compilers, make and the shell print them.
bool is_path_char(char c) {
    return is_word_char(c) || c == '/' || c == '.' || c == '-' || c == '+' || c == '~';
}

// A word that names a file: it has a slash, or ends in a short extension ("stddef.h",
// "unit_1.o", "vmlinux.lds"), and is no kernel symbol ("v9fs_open+0x1c/0x80").
bool is_path(std::string_view word) {
    if (word.find('+') != std::string_view::npos || util::starts_with(word, "0x"))
        return false;
    // "include/x.h", "/usr/bin/ld", "fs/9p": a path; "Input/output", "read/write": words.
    if (word.find('/') != std::string_view::npos) {
        if (word.find_first_not_of("/.") == std::string_view::npos)
            return false;
        bool letters_only = true;
        for (char c : word)
            letters_only &= std::isalpha(static_cast<unsigned char>(c)) || c == '/';
        return !letters_only || word.front() == '/' ||
               std::count(word.begin(), word.end(), '/') > 1;
    }
    size_t dot = word.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || word.size() - dot - 1 > 4 ||
        dot + 1 == word.size())
        return false;
    for (char c : word.substr(dot + 1))
        if (!std::isalnum(static_cast<unsigned char>(c)))
            return false;
    // "1.5" or "0.25" is a number, which the signature replaces anyway.
    return !std::isdigit(static_cast<unsigned char>(word[dot - 1])) ||
           !std::isdigit(static_cast<unsigned char>(word[dot + 1]));
}

// Where the kernel says which check fired: " at fs/9p/vfs_file.c:412" in a WARNING,
// "kernel BUG at mm/slub.c:123!".
bool is_kernel_location(std::string_view line, size_t at) {
    return at >= 4 && line.substr(at - 4, 4) == " at " &&
           (line.find("WARNING:") != std::string_view::npos ||
            line.find("BUG") != std::string_view::npos);
}

// The C library's message for an errno value that `line` ends in ("...: Bad file
// descriptor"), whichever program printed it about whichever file.
std::optional<std::string_view> errno_message(std::string_view line) {
    static const std::vector<std::string_view> k_messages = [] {
        std::vector<std::string_view> out;
        for (int value = 1; value < 134; ++value)
            if (const char* text = ::strerrordesc_np(value))
                out.emplace_back(text);
        return out;
    }();
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
        line.remove_suffix(1);
    for (std::string_view message : k_messages)
        if (line.size() > message.size() + 2 && line.ends_with(message) &&
            line.substr(line.size() - message.size() - 2, 2) == ": ")
            return message;
    return std::nullopt;
}

} // namespace

std::string family_of(std::string_view raw) {
    std::string_view line = strip_prefixes(raw);
    // An I/O error the kernel returned is one failure, whoever met it: the compiler on a
    // header, the assembler on its output, the shell on a redirection.
    if (auto message = errno_message(line))
        return "*: " + std::string(*message);
    std::string out;
    out.reserve(line.size());
    size_t i = 0;
    while (i < line.size()) {
        size_t end = i;
        while (end < line.size() && is_path_char(line[end]))
            ++end;
        if (end == i) {
            out += line[i++];
            continue;
        }
        std::string_view word = line.substr(i, end - i);
        // Trailing dots end a sentence, not a file name.
        while (word.size() > 1 && word.back() == '.')
            word.remove_suffix(1);
        if (is_path(word) && !is_kernel_location(line, i)) {
            out += "<path>";
            i += word.size();
            continue;
        }
        out += line.substr(i, end - i);
        i = end;
    }
    std::string family = signature_of(out);
    // A leading "<path>: " or "<path>:N:N: " says where, not what.
    if (util::starts_with(family, "<path>")) {
        size_t at = 6;
        while (util::starts_with(std::string_view(family).substr(at), ":N"))
            at += 2;
        if (util::starts_with(std::string_view(family).substr(at), ": "))
            family.erase(0, at + 2);
    }
    return family;
}

namespace {

void add_line(Scan& scan, Severity severity, std::string_view source, std::string_view line,
              size_t max_lines) {
    (severity == Severity::error ? scan.errors : scan.warnings)++;
    if (scan.lines.size() >= max_lines)
        return;
    // Very long lines are junk or binary; keep enough to recognise them.
    std::string kept(line.substr(0, 1000));
    while (!kept.empty() && (kept.back() == '\r' || kept.back() == ' '))
        kept.pop_back();
    scan.lines.push_back({severity, std::string(source), kept, signature_of(kept)});
}

} // namespace

namespace {

template <typename F> void for_each_line(std::string_view text, F&& on_line) {
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        on_line(text.substr(start, end - start));
        start = end + 1;
    }
}

// The "<N>" syslog prefix (facility * 8 + level, at most 191) of a console line.
struct SyslogPrefix {
    int priority = 0;
    size_t length = 0;
};
std::optional<SyslogPrefix> syslog_prefix(std::string_view line) {
    // Only "<" and one to three digits: a longer number is no priority (and would overflow).
    size_t close = line.substr(0, 5).find('>');
    if (line.empty() || line[0] != '<' || close == std::string_view::npos || close < 2)
        return std::nullopt;
    SyslogPrefix prefix{0, close + 1};
    for (char c : line.substr(1, close - 1)) {
        if (!std::isdigit(static_cast<unsigned char>(c)))
            return std::nullopt;
        prefix.priority = prefix.priority * 10 + (c - '0');
    }
    return prefix;
}

} // namespace

Scan scan_text(std::string_view text, std::string_view source, size_t max_lines) {
    Scan scan;
    for_each_line(text, [&](std::string_view line) {
        if (auto severity = classify_line(line))
            add_line(scan, *severity, source, line, max_lines);
    });
    return scan;
}

Scan scan_console(std::string_view text, size_t max_lines) {
    Scan scan;
    for_each_line(text, [&](std::string_view line) {
        std::optional<Severity> severity;
        if (auto prefix = syslog_prefix(line)) {
            line.remove_prefix(prefix->length);
            severity = classify_kernel_line(prefix->priority % 8, line);
        } else {
            severity = classify_line(line);
        }
        if (severity)
            add_line(scan, *severity, "console", line, max_lines);
    });
    return scan;
}

std::optional<uint64_t> printk_micros(std::string_view line) {
    if (auto prefix = syslog_prefix(line))
        line.remove_prefix(prefix->length);
    // "[", spaces, up to 12 digits of seconds (so the product cannot overflow), ".", six
    // digits of microseconds, "]".
    if (line.empty() || line[0] != '[')
        return std::nullopt;
    line.remove_prefix(1);
    line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
    const char* end = line.data() + line.size();
    uint64_t seconds = 0;
    uint64_t micros = 0;
    auto [dot, seconds_error] = std::from_chars(line.data(), end, seconds);
    if (seconds_error != std::errc() || dot - line.data() > 12 || dot == end || *dot != '.')
        return std::nullopt;
    auto [close, micros_error] = std::from_chars(dot + 1, end, micros);
    if (micros_error != std::errc() || close - (dot + 1) != 6 || close == end || *close != ']')
        return std::nullopt;
    return seconds * 1000000 + micros;
}

Scan scan_module_output(std::string_view text, size_t max_lines) {
    Scan scan;
    for_each_line(text, [&](std::string_view line) {
        auto prefix = syslog_prefix(line);
        if (!prefix)
            return;
        line.remove_prefix(prefix->length);
        int level = prefix->priority % 8;
        // Loading any out-of-tree module taints the kernel, and says so at warning level.
        if (level > 4 || classify_line(line) || contains(line, "taints kernel"))
            return;
        add_line(scan, level <= 3 ? Severity::error : Severity::warning, "module", line, max_lines);
    });
    return scan;
}

void merge_scan(Scan& into, Scan more, size_t max_lines) {
    into.errors += more.errors;
    into.warnings += more.warnings;
    for (auto& line : more.lines) {
        if (into.lines.size() >= max_lines)
            break;
        into.lines.push_back(std::move(line));
    }
}

} // namespace rig::core
