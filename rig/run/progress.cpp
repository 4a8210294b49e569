// SPDX-License-Identifier: MIT
// Progress display.
#include "run/progress.hpp"

#include "util/units.hpp"

#include <algorithm>

namespace rig::run {

Progress::Progress(std::ostream& out, bool tty, size_t total_samples, util::Clock& clock)
    : m_out(out), m_clock(clock), m_tty(tty), m_total(total_samples) {}

std::string Progress::status_line() const {
    double elapsed = std::chrono::duration<double>(m_clock.now() - m_run_start).count();
    double in_sample = std::chrono::duration<double>(m_clock.now() - m_sample_start).count();
    std::string eta = "?";
    if (m_done > 0) {
        // Mean sample time so far, times what is left, minus what this one already took.
        double mean = m_done_seconds / static_cast<double>(m_done);
        double left = mean * static_cast<double>(m_total - m_index) - std::min(in_sample, mean);
        eta = util::format_duration(std::max(0.0, left), util::DurationStyle::progress);
    }
    return "[" + std::to_string(m_index + 1) + "/" + std::to_string(m_total) + "] " + m_label +
           ": " + m_phase + " (" + util::format_duration(in_sample, util::DurationStyle::progress) +
           "; elapsed " + util::format_duration(elapsed, util::DurationStyle::progress) + ", ETA " +
           eta + ")";
}

void Progress::draw() {
    m_last_draw = m_clock.now();
    if (m_tty)
        m_out << "\r\033[K" << status_line() << std::flush;
    else
        m_out << util::log_line(m_clock, status_line()) << "\n" << std::flush;
}

void Progress::begin_sample(size_t index, const std::string& label) {
    m_index = index;
    m_label = label;
    m_phase = "starting";
    m_sample_start = m_clock.now();
}

void Progress::phase(const std::string& name) {
    m_phase = name;
    draw();
}

void Progress::tick() {
    if (m_tty && m_clock.now() - m_last_draw >= std::chrono::seconds(1))
        draw();
}

void Progress::end_sample(const std::string& outcome, double seconds) {
    ++m_done;
    m_done_seconds += seconds;
    note("[" + std::to_string(m_index + 1) + "/" + std::to_string(m_total) + "] " + m_label + ": " +
         outcome + " in " + util::format_duration(seconds, util::DurationStyle::progress));
}

void Progress::batch(const std::string& source, size_t queued, size_t running, size_t done) {
    std::string counts = "queued " + std::to_string(queued) + ", running " +
                         std::to_string(running) + ", done " + std::to_string(done) + "/" +
                         std::to_string(m_total);
    if (!m_tty && counts == m_batch_line)
        return;
    if (m_tty && counts == m_batch_line && m_clock.now() - m_last_draw < std::chrono::seconds(1))
        return;
    m_batch_line = counts;
    m_last_draw = m_clock.now();
    double elapsed = std::chrono::duration<double>(m_clock.now() - m_run_start).count();
    std::string eta = "?";
    const double left = static_cast<double>(m_total - std::min(done, m_total));
    if (m_slots && m_done > 0) {
        double mean = m_done_seconds / static_cast<double>(m_done);
        double width = std::min(static_cast<double>(*m_slots), std::max(left, 1.0));
        eta = util::format_duration(left * mean / width, util::DurationStyle::progress);
    } else if (done > 0) {
        eta = util::format_duration(elapsed / static_cast<double>(done) * left,
                                    util::DurationStyle::progress);
    }
    std::string line = source + ": " + counts + " (elapsed " +
                       util::format_duration(elapsed, util::DurationStyle::progress) + ", ETA " +
                       eta + ")";
    if (m_tty)
        m_out << "\r\033[K" << line << std::flush;
    else
        m_out << util::log_line(m_clock, line) << "\n" << std::flush;
}

void Progress::finished(double seconds) {
    ++m_done;
    m_done_seconds += seconds;
}

void Progress::parallel(size_t slots) {
    m_slots = std::max<size_t>(1, slots);
}

void Progress::note(const std::string& line) {
    if (m_tty)
        m_out << "\r\033[K" << line << "\n" << std::flush;
    else
        m_out << util::log_line(m_clock, line) << "\n" << std::flush;
}

} // namespace rig::run
