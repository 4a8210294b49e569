// SPDX-License-Identifier: MIT
// Progress of a long run: which sample and cell, which phase, elapsed time and ETA.
// On a terminal one status line is redrawn; elsewhere (a log) each phase is a line of its
// own, stamped with the wall time in UTC (util::log_line).
#pragma once

#include "util/clock.hpp"

#include <chrono>
#include <optional>
#include <ostream>
#include <string>

namespace rig::run {

class Progress final {
public:
    // Elapsed time and ETA follow `clock`.
    Progress(std::ostream& out, bool tty, size_t total_samples, util::Clock& clock);

    void begin_sample(size_t index, const std::string& label);
    void phase(const std::string& name);
    void tick(); // cheap; redraws the terminal line at most once a second
    void end_sample(const std::string& outcome, double seconds);
    void note(const std::string& line); // a line that stays, above the status line
    // Samples run many at once (`source`: slurm's batch jobs, or guests under --jobs): the
    // status line counts them instead. Elsewhere than a terminal a line is printed only when
    // the counts change.
    void batch(const std::string& source, size_t queued, size_t running, size_t done);
    // Of samples run many at once on rig's own slots: one finished in `seconds`, and at
    // most `slots` run together. The ETA is then what is left times the mean sample over
    // the slots: completions arrive in bursts of `slots`, so elapsed over done would first
    // count one guest's time for each finished sample, then halve as its neighbour ends
    // (10m24s, 4m53s).
    void finished(double seconds);
    void parallel(size_t slots);

private:
    using Clock = std::chrono::steady_clock;
    std::string status_line() const;
    void draw();

    std::ostream& m_out;
    util::Clock& m_clock;
    bool m_tty;
    size_t m_total;
    size_t m_index = 0;
    size_t m_done = 0;
    double m_done_seconds = 0;
    std::string m_label;
    std::string m_phase;
    Clock::time_point m_run_start = m_clock.now();
    Clock::time_point m_sample_start = m_run_start;
    Clock::time_point m_last_draw{};
    std::string m_batch_line; // the counts last shown
    // Samples at most at once, where rig places them (--jobs); a cluster's width is its
    // own, and there the ETA is the throughput so far.
    std::optional<size_t> m_slots;
};

} // namespace rig::run
