// SPDX-License-Identifier: MIT
// A bisect for people: its report (with a summary ready to paste into a mail) and the
// status table of all bisects.
#pragma once

#include "bisect/settings.hpp"
#include "core/cell.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace rig::bisect {

// The bisect as text: status, endpoints, step table, culprit, confidence (naming the test
// each verdict used), cost, and a summary ready to paste into a mail.
Expected<std::string> render_report(int64_t id, store::Database& db, const Settings& settings);
// What a report of a verified culprit says of the bisect that found it (`rig watch`'s
// mail): the commits, the headline change, the evidence and the cost.
struct CulpritFinding {
    std::string culprit; // full sha
    std::string subject;
    std::string author; // "Name <address>"
    std::string date;
    std::string parent; // the culprit's parent, as the verification tested it; "" when none
    std::string parent_subject;
    core::Cell cell;
    // "1835.0% regression of 9p.work.getattr", "12.5% regression of duration" or
    // "new error: LINE": the subject's end.
    std::string headline;
    // The criterion's value on each side (duration, metric), from the samples judged good
    // and bad: n, median, spread; empty under errors.
    std::string comparison;
    std::string changes;      // what else changed (report/changes.hpp)
    std::string verification; // how the culprit and its parent tested again
    std::string confidence;
    std::string steps; // the step table
    std::string cost;  // one line
};
// An error unless the bisect ended with a verified culprit.
Expected<CulpritFinding> culprit_finding(int64_t id, store::Database& db, const Settings& settings);

// The culprit's reproducer (run/reproducer.hpp) at `tarball`: a sample of the verification
// that tested the culprit bad again, as its folder's recipe boots it. An error unless the
// bisect ended with a verified culprit whose sample keeps a recipe.
Expected<void> write_culprit_reproducer(int64_t id, store::Database& db, const Settings& settings,
                                        const std::string& kernel_config,
                                        const std::filesystem::path& tarball);

// Bisect `id`'s finding as a reply to its series' cover letter (`--series`): one message in
// an mbox, "Re: [PATCH 0/N] ..." with In-Reply-To and References from the cover letter, to
// the culprit patch's author with the series' sender and recipients in Cc, from `from`.
// A usage error for a bisect without a series or a cover letter, or that has not ended.
Expected<std::string> series_reply(int64_t id, store::Database& db, const Settings& settings,
                                   const std::string& from,
                                   std::chrono::system_clock::time_point date);

// One line per bisect, or a few for one.
Expected<std::string> render_status(store::Database& db, int64_t id);

} // namespace rig::bisect
