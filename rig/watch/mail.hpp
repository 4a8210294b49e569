// SPDX-License-Identifier: MIT
// One culprit's report as a mail: an RFC 5322 message in an mbox file of its own, laid out
// as kernel test robots lay theirs out (reports/watch-mail.txt.mustache), which `git am`,
// b4, mail clients and `git send-email` read.
#pragma once

#include "bisect/report.hpp"
#include "util/error.hpp"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace rig::watch {

struct Report {
    std::string from; // the robot: "Name <address>"
    std::string to;   // the culprit's author
    std::vector<std::string> cc;
    std::string tree;   // the kernel entry's name
    std::string branch; // the watched branch
    std::string repo;   // where it was fetched from
    std::string head;   // the head it was found on
    std::string criterion;
    std::string cell_filter; // the bisect's --cell
    // The cell's parameters as "name: value" lines: kernel config, fs, msize, cache, the
    // workload, the guest's shape and accelerator.
    std::vector<std::pair<std::string, std::string>> parameters;
    bisect::CulpritFinding finding;
    std::string bisect_log;
    std::string scenario_file; // its name, for the commands
    std::string scenario_text;
    std::string kernel_config; // "" when not found
    std::string archive;       // the list archive's URL; "" none
    // The reproducer's file name in the outbox (run/reproducer.hpp); "" none.
    std::string reproducer;
    std::chrono::system_clock::time_point date;
};

struct Mail {
    std::string subject;
    std::string message_id; // without <>
    std::string text;       // the mbox file: a "From " line, the headers, the body
};

// The Message-ID depends only on the culprit, cell and criterion and the robot's domain,
// so that a report written again after a kill is the same message.
Expected<Mail> compose(const Report& report);

} // namespace rig::watch
