// SPDX-License-Identifier: MIT
// What changed between two cells (a cell and its baseline twin; in a bisect, the samples
// judged good and those judged bad): every metric both carry, the duration and host CPU, each
// decided on its own, and the significant ones ranked by size within groups a maintainer reads
// together.
#pragma once

#include "core/stats.hpp"
#include "report/compare.hpp"
#include "report/data.hpp"
#include "util/json.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rig::report {

enum class ChangeKind {
    exact,    // no spread over two or more samples on either side: a count that moved
    tested,   // varying: Mann-Whitney, significant after the false discovery rate control
    appeared, // carried only by the later side (a function, a request type), never "0"
    vanished, // carried only by the earlier side
};

struct MetricChange {
    std::string group; // metric_group(name)
    std::string name;
    std::string unit;
    core::Summary before;
    core::Summary after;
    double change_percent = 0; // of the medians; infinite from a median of 0
    ChangeKind kind = ChangeKind::exact;
    double p = 0; // tested: the rank test's p
    double q = 0; // tested: p after Benjamini-Hochberg over every tested metric
};

struct ChangeSet {
    size_t compared = 0; // metrics looked at (both sides carry them)
    size_t tested = 0;   // of which varied and were rank-tested
    // Significant changes: groups ordered by their largest change, each group's lines by
    // size; a metric on one side only closes its group.
    std::vector<MetricChange> changes;
};

// The significant changes from `before` to `after`. A count is exact only when it did not
// vary over at least two samples on each side (identical runs have moved getattr counts
// by 6 %); a varying figure is significant when its q is below `fdr`. With one sample on a
// side nothing is exact, and the rank test of so few calls nothing either.
ChangeSet what_changed(const CellResult& before, const CellResult& after, double fdr);

// Where a metric is read in the block: "9p requests, share work", "virtiofs requests",
// "FUSE requests", "guest function counts", "guest counters", "durations", "host",
// "workload metrics"; with ", phase NAME" for a phase's own window ("build/9p.work.walk").
std::string metric_group(std::string_view name);

// "9p.work.getattr: 72 -> 1393 (+1834.7 %), exact, n 3/3": one line of the block.
std::string change_line(const MetricChange& change);

// "12 figures compared, 3 of them varying (rank test, ...)": what the block looked at.
std::string counted_text(const ChangeSet& set);

// The block as text or markdown: a heading naming both sides, then the groups. Says so
// when nothing changed significantly.
std::string changes_text(const ChangeSet& set, const std::string& heading, bool markdown);

util::Json changes_json(const ChangeSet& set);

// The change set of each compared cell against its twin (cell order; nothing for the
// others), and the heading that names both.
struct CellChanges {
    size_t cell = 0;
    std::string heading;
    ChangeSet set;
};
std::vector<CellChanges> changes_of(const ReportData& data,
                                    const std::vector<Comparison>& comparisons, double fdr);

} // namespace rig::report
