// SPDX-License-Identifier: MIT
// Finding error and warning lines in guest output, and their normalized signatures.
#pragma once

#include "core/sample.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rig::core {

// Kernel WARNING/BUG/Oops/Call Trace/panic, 9pnet/netfs/fuse/virtio-fs errors, I/O error
// strings (EBADF, EIO, ESTALE) and compiler diagnostics. nullopt for an ordinary line.
std::optional<Severity> classify_line(std::string_view line);

// A kernel log line with its printk level (0 emerg .. 7 debug): the patterns above,
// plus any error-level line, plus warn-level lines of the filesystem subsystems.
std::optional<Severity> classify_kernel_line(int level, std::string_view line);

// The line with timestamps, addresses, numbers and pids replaced, so that the same
// failure in two boots has the same signature.
std::string signature_of(std::string_view line);

// The line's family: its signature with the operands a failure varies from run to run
// also replaced, so that "a.c:3:10: fatal error: x.h: Input/output error" and
// "b.c:7:1: fatal error: y/z.h: Input/output error" are one failure. Paths and file
// names become "<path>", and a leading location ("<path>:N:N: ", or a program's path
// such as ld's) is dropped. The kernel's own location in a WARNING or BUG line ("at
// fs/9p/vfs_file.c:N") stays: it names the check that fired. A line that ends in an
// errno's message ("...: Bad file descriptor") is the family "*: Bad file descriptor",
// whichever program met it on whichever file.
std::string family_of(std::string_view line);

// Every classified line of `text`, at most `max_lines` of them (the rest are counted).
struct Scan {
    std::vector<ErrorLine> lines;
    int errors = 0;
    int warnings = 0;
};
Scan scan_text(std::string_view text, std::string_view source, size_t max_lines = 200);
// The guest console, whose kernel lines carry their printk level as a "<N>" prefix
// (console_msg_format=syslog): classified with classify_kernel_line, and stored without
// the prefix. Lines without one are classified by classify_line.
Scan scan_console(std::string_view text, size_t max_lines = 200);

// A module workload's output: the kernel log since its load, each line "<N>"-prefixed
// with its printk level (rig-metric lines without). The module is what is tested, so
// its error- and warning-level lines count, except those classify_line finds anyway:
// the console, where the same lines appear, counts those.
Scan scan_module_output(std::string_view text, size_t max_lines = 200);

// The printk timestamp of a kernel log line ("<6>[    1.234567] ..."; the "<N>" is
// optional) in microseconds since boot, or nullopt for a line without one.
std::optional<uint64_t> printk_micros(std::string_view line);

// Adds `more` into `into`, keeping its line limit and counting what it drops.
void merge_scan(Scan& into, Scan more, size_t max_lines = 200);

} // namespace rig::core
