// SPDX-License-Identifier: MIT
// `rig watch`: each new head of a branch tested with the scenario's cells, held against the
// heads judged good before it (and a fixed reference), a suspected regression confirmed by
// fresh samples of both sides and bisected, and one mail per culprit written to the outbox.
// Every step's result lives in the database (store's watch tables), so a watcher killed
// at any moment carries on where it stopped: no head skipped, no report twice.
#pragma once

#include "bisect/report.hpp"
#include "core/scenario.hpp"
#include "core/status.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/error.hpp"

#include <atomic>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace rig::watch {

// Runs a head's cells: the scenario narrowed to the followed kernel at one commit (its text
// tagged with it, so that a run begun before a kill is found and resumed, never begun
// twice). Returns the run's id once every sample is stored; ErrorKind::interrupted when
// stopped. The real one (cli/) runs on the scenario's backend; unit tests give a fake.
class Tester {
public:
    virtual ~Tester() = default;
    virtual Expected<int64_t> test(const core::Scenario& scenario, const std::string& commit) = 0;
};

struct BisectRequest {
    std::string good;
    std::string bad;
    std::string cell; // --cell
    std::string criterion;
    int samples = 3;
    int max_samples = 10;
    int max_builds = 0; // the cost cap, each 0 for none
    int max_boots = 0;
    double max_hours = 0;
};

struct BisectEnd {
    core::BisectStatus status = core::BisectStatus::running;
    std::string culprit;
    std::string message;
};

// rig's bisect, as the watch drives it; unit tests give a fake.
class Bisector {
public:
    virtual ~Bisector() = default;
    virtual Expected<int64_t> create(const BisectRequest& request) = 0;
    // Runs or resumes the bisect to its end (or until interrupted).
    virtual Expected<BisectEnd> run(int64_t id) = 0;
    virtual Expected<bisect::CulpritFinding> finding(int64_t id) = 0;
    virtual Expected<std::string> log(int64_t id) = 0;
    // The culprit's reproducer (run/reproducer.hpp) at `tarball`, with its .config.
    virtual Expected<void> reproducer(int64_t id, const std::string& kernel_config,
                                      const std::filesystem::path& tarball) = 0;
};

struct Settings {
    Tester* tester = nullptr;     // required
    Bisector* bisector = nullptr; // required
    // What else moves results (watch/environment.hpp): of a head's run, by id.
    std::function<Expected<std::string>(int64_t run_id)> environment;
    // Runs the scenario's `send` command; null: proc (tests record instead).
    std::function<Expected<void>(const std::vector<std::string>& argv)> send;
    // The kernel .config a commit was built with, for the mail; "" when unknown. Null: none.
    std::function<std::string(const std::string& commit)> kernel_config;
    util::Clock* clock = &util::real_clock();
};

// The watch's name in the database: "SCENARIO:BRANCH".
std::string watch_name(const core::Scenario& scenario);

enum class RoundEnd {
    nothing_moved, // the head was tested before
    skipped,       // its new commits touch none of the watch's paths
    tested,        // tested and judged
    interrupted,   // stopped: the next round carries on
};
std::string_view to_string(RoundEnd end);

struct RoundResult {
    RoundEnd end = RoundEnd::nothing_moved;
    std::string head;
    core::HeadStatus status = core::HeadStatus::testing; // of the head, once tested
    int reports = 0;                                     // mails written this round
};

// One round: fetch, test the newest head if it moved, judge, confirm and bisect what
// regressed, report. A round a kill stopped is finished first. `log` gets timestamped
// lines.
Expected<RoundResult> run_round(const core::Scenario& scenario, store::Database& db,
                                const Settings& settings, const std::atomic<bool>& interrupted,
                                std::ostream& log);

// Heads tested, their verdicts and the regressions, open and fixed.
Expected<std::string> render_status(store::Database& db, const std::string& watch = "");

} // namespace rig::watch
