// SPDX-License-Identifier: MIT
// The watch's round: what a head is held against, what it shows, and what is reported.
#include "watch/watch.hpp"

#include "bisect/verdict.hpp"
#include "core/diagnostic.hpp"
#include "proc/process.hpp"
#include "run/reproducer.hpp"
#include "util/file.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"
#include "watch/branch.hpp"
#include "watch/detect.hpp"
#include "watch/history.hpp"
#include "watch/mail.hpp"
#include "watch/maintainers.hpp"
#include "watch/samples.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace rig::watch {

using util::short_sha;

namespace fs = std::filesystem;

namespace {

// The good heads whose samples a new head is held against.
constexpr size_t k_history = 5;

// One timestamped line: a log read later, by a person or a journal.
class Log {
public:
    Log(std::ostream& out, util::Clock& clock) : m_out(out), m_clock(clock) {}
    void operator()(const std::string& line) {
        m_out << util::utc_text(m_clock.wall_now()) << " " << line << "\n" << std::flush;
    }

private:
    std::ostream& m_out;
    util::Clock& m_clock;
};

struct Criterion {
    bisect::Criterion parsed;
    std::string text;
};

// The scenario's criteria, parsed as the bisect parses them; a bad one is a config error
// at the place it was written.
Expected<std::vector<Criterion>> criteria_of(const core::Scenario& scenario) {
    std::vector<Criterion> out;
    for (const core::Located& text : scenario.watch->criteria) {
        auto parsed = bisect::parse_criterion(text.value);
        if (!parsed)
            return core::config_error(scenario.file, text.loc, text.path, parsed.error().message);
        out.push_back({*parsed, text.value});
    }
    return out;
}

const core::Kernel& followed_kernel(const core::Scenario& scenario) {
    for (const core::Kernel& kernel : scenario.kernels)
        if (kernel.name == scenario.watch->kernel)
            return kernel;
    return scenario.kernels.front(); // spec/ has checked that the entry exists
}

fs::path repository_of(const core::Scenario& scenario) {
    fs::path repo = followed_kernel(scenario).repo;
    return repo.is_absolute() ? repo : fs::path(scenario.dir) / repo;
}

// The bisect's --cell for one cell of any commit: its kernel, config and axes.
std::string cell_filter(const core::Cell& cell) {
    std::vector<std::string> pairs{"kernel=" + cell.kernel_name, "config=" + cell.config};
    for (const std::string& pair : cell.param_pairs())
        pairs.push_back(pair);
    return util::join(pairs, ",");
}

class Round {
public:
    Round(const core::Scenario& scenario, store::Database& db, const Settings& settings,
          const std::atomic<bool>& interrupted, std::ostream& out)
        : m_scenario(scenario), m_watch(*scenario.watch), m_db(db), m_settings(settings),
          m_interrupted(interrupted), m_log(out, *settings.clock),
          m_branch(repository_of(scenario), *scenario.watch), m_name(watch_name(scenario)) {}

    Expected<RoundResult> run() {
        m_criteria = RIG_TRY(criteria_of(m_scenario));
        // A round a kill stopped comes first: its head is older than anything fetched now.
        for (store::WatchHead& head : RIG_TRY(m_db.watch_heads(m_name)))
            if (head.status == core::HeadStatus::testing) {
                m_log("resuming head " + short_sha(head.commit) + " (a round was stopped)");
                RoundResult result = RIG_TRY(finish(head));
                if (result.end == RoundEnd::interrupted)
                    return result;
            }
        if (!m_watch.reference.empty())
            RIG_TRY(test_reference());
        if (m_interrupted)
            return RoundResult{RoundEnd::interrupted, "", core::HeadStatus::testing, m_reports};
        m_log("fetching " + m_watch.branch +
              (m_watch.repo.empty() ? " of " + m_branch.repo().string() : " from " + m_watch.repo));
        const std::string head = RIG_TRY(m_branch.fetch_head());
        std::vector<store::WatchHead> heads = RIG_TRY(m_db.watch_heads(m_name));
        for (const store::WatchHead& known : heads)
            if (known.commit == head) {
                m_log("nothing moved: " + m_watch.branch + " is at " + short_sha(head) + " (" +
                      std::string(core::to_string(known.status)) + ")");
                return RoundResult{RoundEnd::nothing_moved, head, known.status, m_reports};
            }
        store::WatchHead added;
        added.watch = m_name;
        added.commit = head;
        const store::WatchHead* last = last_tested(heads);
        if (last) {
            if (!RIG_TRY(m_branch.is_ancestor(last->commit, head)))
                added.note = "force-push: " + short_sha(last->commit) + " is not an ancestor of " +
                             short_sha(head) + "; held against the newest good head that is";
            else if (!m_watch.paths.empty() &&
                     !RIG_TRY(m_branch.touches(last->commit, head, m_watch.paths))) {
                added.status = core::HeadStatus::skipped;
                added.note = "no commit of " + short_sha(last->commit) + ".." + short_sha(head) +
                             " touches " + util::join(m_watch.paths, " ");
            }
        }
        if (!added.note.empty())
            m_log(added.note);
        added.id = RIG_TRY(m_db.add_watch_head(added));
        if (added.status == core::HeadStatus::skipped)
            return RoundResult{RoundEnd::skipped, head, added.status, m_reports};
        return finish(added);
    }

private:
    // The newest head that was tested, the reference aside.
    const store::WatchHead* last_tested(const std::vector<store::WatchHead>& heads) const {
        for (auto it = heads.rbegin(); it != heads.rend(); ++it)
            if (it->status != core::HeadStatus::skipped && it->commit != m_reference)
                return &*it;
        return nullptr;
    }

    Expected<void> test_reference() {
        m_reference = RIG_TRY(m_branch.resolve(m_watch.reference));
        for (const store::WatchHead& head : RIG_TRY(m_db.watch_heads(m_name)))
            if (head.commit == m_reference)
                return {};
        m_log("testing the reference " + m_watch.reference + " (" + short_sha(m_reference) + ")");
        store::WatchHead head;
        head.watch = m_name;
        head.commit = m_reference;
        head.note = "the reference " + m_watch.reference;
        head.id = RIG_TRY(m_db.add_watch_head(head));
        RIG_TRY(finish(head));
        return {};
    }

    // The run of the head's cells, then its verdict.
    Expected<RoundResult> finish(store::WatchHead head) {
        if (head.run_id == 0) {
            m_log("testing " + short_sha(head.commit) + ": the scenario's cells of kernel " +
                  m_watch.kernel);
            auto run_id = m_settings.tester->test(m_scenario, head.commit);
            if (!run_id && run_id.error().kind == ErrorKind::interrupted)
                return RoundResult{RoundEnd::interrupted, head.commit, head.status, m_reports};
            head.run_id = RIG_TRY(std::move(run_id));
            head.environment = RIG_TRY(m_settings.environment(head.run_id));
            RIG_TRY(m_db.update_watch_head(head));
        }
        if (m_interrupted)
            return RoundResult{RoundEnd::interrupted, head.commit, head.status, m_reports};
        return judge(head);
    }

    // What `head` is held against, each a set of good heads whose samples are pooled: the
    // newest good ancestors in its environment (up to k_history: one head's few samples
    // would let TCG's noise hide a slowdown, or pass one into the baseline), and the
    // reference. The first of each set is the bisect's good end.
    Expected<std::vector<std::vector<store::WatchHead>>> baselines(const store::WatchHead& head,
                                                                   std::string& note) {
        std::vector<store::WatchHead> heads = RIG_TRY(m_db.watch_heads(m_name));
        std::vector<std::vector<store::WatchHead>> out;
        std::vector<store::WatchHead> history;
        std::optional<store::WatchHead> other_environment;
        for (auto it = heads.rbegin(); it != heads.rend() && history.size() < k_history; ++it) {
            if (it->id == head.id || it->status != core::HeadStatus::good ||
                it->commit == m_reference)
                continue;
            if (it->environment != head.environment) {
                if (!other_environment)
                    other_environment = *it;
                continue;
            }
            if (RIG_TRY(m_branch.is_ancestor(it->commit, head.commit)))
                history.push_back(*it);
        }
        if (!history.empty())
            out.push_back(history);
        for (const store::WatchHead& known : heads)
            if (known.commit == m_reference && known.id != head.id &&
                known.status == core::HeadStatus::good && known.environment == head.environment)
                out.push_back({known});
        if (out.empty())
            note = other_environment
                       ? "a new environment (" + head.environment + ", was " +
                             other_environment->environment + "): this head starts a new baseline"
                       : "the first head: the baseline";
        return out;
    }

    Expected<RoundResult> judge(store::WatchHead head) {
        std::string note;
        std::vector<std::vector<store::WatchHead>> against = RIG_TRY(baselines(head, note));
        RunSamples now = RIG_TRY(samples_of_run(m_db, head.run_id));
        if (against.empty()) {
            m_log(short_sha(head.commit) + ": " + note);
            head.note = head.note.empty() ? note : head.note + "; " + note;
            return settle(head, core::HeadStatus::good);
        }
        head.baseline = against.front().front().commit;
        for (const std::vector<store::WatchHead>& pooled : against) {
            const store::WatchHead& baseline = pooled.front();
            RunSamples before;
            for (const store::WatchHead& good : pooled)
                for (auto& [key, samples] : RIG_TRY(samples_of_run(m_db, good.run_id)).by_key)
                    before.by_key[key].insert(before.by_key[key].end(), samples.begin(),
                                              samples.end());
            for (const auto& [key, samples] : now.by_key) {
                auto old = before.by_key.find(key);
                if (old == before.by_key.end())
                    continue;
                for (const Criterion& criterion : m_criteria) {
                    auto detail = screen(criterion.parsed, old->second, samples);
                    if (!detail)
                        continue;
                    const core::Cell& cell = now.cells.at(key);
                    m_log("suspect: " + cell.label() + " under " + criterion.text + " against " +
                          short_sha(baseline.commit) +
                          (pooled.size() > 1
                               ? " and " + std::to_string(pooled.size() - 1) + " good heads before"
                               : "") +
                          ": " + *detail);
                    store::WatchFinding finding{.head_id = head.id,
                                                .cell_key = key,
                                                .cell = cell_filter(cell),
                                                .criterion = criterion.text,
                                                .baseline = baseline.commit,
                                                .detail = *detail};
                    RIG_TRY(m_db.add_watch_finding(finding));
                }
            }
        }
        bool bad = false, unsure = false;
        for (store::WatchFinding& finding : RIG_TRY(m_db.watch_findings(head.id))) {
            if (finding.status == core::FindingStatus::suspect) {
                auto ended = RIG_TRY(follow(finding, head));
                if (!ended)
                    return RoundResult{RoundEnd::interrupted, head.commit, head.status, m_reports};
            }
            bad = bad || finding.status == core::FindingStatus::reported ||
                  finding.status == core::FindingStatus::linked;
            unsure = unsure || finding.status == core::FindingStatus::inconclusive ||
                     finding.status == core::FindingStatus::stopped;
        }
        RIG_TRY(record_fixes(head, now));
        return settle(head, bad      ? core::HeadStatus::bad
                            : unsure ? core::HeadStatus::suspect
                                     : core::HeadStatus::good);
    }

    Expected<RoundResult> settle(store::WatchHead head, core::HeadStatus status) {
        head.status = status;
        RIG_TRY(m_db.update_watch_head(head));
        m_log("head " + short_sha(head.commit) + ": " + std::string(core::to_string(status)));
        return RoundResult{RoundEnd::tested, head.commit, status, m_reports};
    }

    // A suspect confirmed and bisected, linked to an open regression, or found to be noise.
    // False when the bisect was stopped before its end.
    Expected<bool> follow(store::WatchFinding& finding, const store::WatchHead& head) {
        for (const store::WatchRegression& open : RIG_TRY(m_db.watch_regressions(m_name)))
            if (open.status == core::RegressionStatus::open && open.cell_key == finding.cell_key &&
                open.criterion == finding.criterion) {
                m_log("still there: the regression reported for " + short_sha(open.culprit) + " (" +
                      open.subject + ")");
                finding.status = core::FindingStatus::linked;
                finding.regression_id = open.id;
                RIG_TRY(m_db.update_watch_finding(finding));
                return true;
            }
        if (finding.bisect_id == 0) {
            finding.bisect_id = RIG_TRY(m_settings.bisector->create(BisectRequest{
                finding.baseline, head.commit, finding.cell,
                bisect_criterion(finding.criterion, finding.detail), m_watch.samples,
                m_watch.max_bisect_samples, m_watch.max_bisect_builds, m_watch.max_bisect_boots,
                std::chrono::duration<double, std::ratio<3600>>(m_watch.max_bisect_time).count()}));
            RIG_TRY(m_db.update_watch_finding(finding));
        }
        m_log("bisect " + std::to_string(finding.bisect_id) + ": confirming, then bisecting " +
              short_sha(finding.baseline) + ".." + short_sha(head.commit) + " on " +
              bisect_criterion(finding.criterion, finding.detail));
        BisectEnd end = RIG_TRY(m_settings.bisector->run(finding.bisect_id));
        switch (end.status) {
        case core::BisectStatus::culprit:
            RIG_TRY(report(finding, head, end));
            break;
        case core::BisectStatus::not_reproducible:
            m_log("not confirmed by fresh samples: " + end.message);
            finding.status = core::FindingStatus::unconfirmed;
            break;
        case core::BisectStatus::unverified:
        case core::BisectStatus::inconclusive:
            m_log("bisect " + std::to_string(finding.bisect_id) +
                  " named no verified culprit: " + end.message);
            finding.status = core::FindingStatus::inconclusive;
            break;
        case core::BisectStatus::stopped:
            m_log("bisect " + std::to_string(finding.bisect_id) + " stopped: " + end.message);
            finding.status = core::FindingStatus::stopped;
            break;
        case core::BisectStatus::capped:
            m_log("bisect " + std::to_string(finding.bisect_id) + " ended at its " + end.message);
            finding.status = core::FindingStatus::stopped;
            break;
        case core::BisectStatus::running:
        case core::BisectStatus::interrupted:
            return false;
        }
        RIG_TRY(m_db.update_watch_finding(finding));
        return true;
    }

    // One mail per culprit, cell and criterion: written whole, then renamed into the
    // outbox, then recorded, then sent.
    Expected<void> report(store::WatchFinding& finding, const store::WatchHead& head,
                          const BisectEnd& end) {
        for (const store::WatchRegression& known : RIG_TRY(m_db.watch_regressions(m_name)))
            if (known.culprit == end.culprit && known.cell_key == finding.cell_key &&
                known.criterion == finding.criterion) {
                finding.status = core::FindingStatus::linked;
                finding.regression_id = known.id;
                return send(known);
            }
        bisect::CulpritFinding found = RIG_TRY(m_settings.bisector->finding(finding.bisect_id));
        Report report;
        report.from = m_watch.from;
        report.to = found.author;
        report.cc = RIG_TRY(copied(found));
        report.tree = m_watch.kernel;
        report.branch = m_watch.branch;
        report.repo = m_watch.repo.empty() ? m_branch.repo().string() : m_watch.repo;
        report.head = head.commit;
        report.criterion = finding.criterion;
        report.cell_filter = finding.cell;
        report.parameters = parameters(found.cell, head);
        report.finding = found;
        report.bisect_log = RIG_TRY(m_settings.bisector->log(finding.bisect_id));
        report.scenario_file = fs::path(m_scenario.file).filename().string();
        report.scenario_text = m_scenario.text;
        report.archive = m_watch.archive;
        if (m_settings.kernel_config)
            report.kernel_config = m_settings.kernel_config(found.culprit);
        report.date = m_settings.clock->wall_now();
        fs::path outbox = m_watch.outbox;
        if (outbox.is_relative())
            outbox = fs::path(m_scenario.dir) / outbox;
        std::error_code ec;
        fs::create_directories(outbox, ec);
        const std::string stem = short_sha(found.culprit) + "-" + finding.cell_key.substr(0, 8) +
                                 "-" + util::sha256_hex(finding.criterion).substr(0, 8);
        // The reproducer first, so that the mail names only one that is there.
        const std::string reproducer = stem + ".repro" + std::string(run::k_tarball_suffix);
        Expected<void> packed = m_settings.bisector->reproducer(
            finding.bisect_id, report.kernel_config, outbox / reproducer);
        if (packed)
            report.reproducer = reproducer;
        else
            m_log("no reproducer beside the mail: " + packed.error().message);
        Mail mail = RIG_TRY(compose(report));
        const fs::path file = outbox / (stem + ".mbox");
        RIG_TRY(util::write_file_atomically(file, mail.text));
        store::WatchRegression regression;
        regression.watch = m_name;
        regression.culprit = found.culprit;
        regression.cell_key = finding.cell_key;
        regression.criterion = finding.criterion;
        regression.found_on = head.commit;
        regression.bisect_id = finding.bisect_id;
        regression.subject = mail.subject;
        regression.message_id = mail.message_id;
        regression.mail = file.string();
        regression.id = RIG_TRY(m_db.add_watch_regression(regression));
        finding.status = core::FindingStatus::reported;
        finding.regression_id = regression.id;
        ++m_reports;
        m_log("reported: " + mail.subject + " -> " + file.string());
        return send(regression);
    }

    // The scenario's lists, then the maintainers and lists of the culprit's files, each once
    // and never the author it goes to.
    Expected<std::vector<std::string>> copied(const bisect::CulpritFinding& found) {
        std::vector<std::string> cc = m_watch.cc;
        auto named = maintainers(m_branch, found.culprit);
        if (!named)
            m_log("get_maintainer.pl of " + short_sha(found.culprit) +
                  " failed: " + named.error().message + "; copied to the scenario's lists only");
        for (const std::string& address : named ? *named : std::vector<std::string>())
            if (address != found.author && std::find(cc.begin(), cc.end(), address) == cc.end())
                cc.push_back(address);
        return cc;
    }

    // The scenario's send command, once per report.
    Expected<void> send(store::WatchRegression regression) {
        if (m_watch.send.empty() || regression.sent)
            return {};
        std::vector<std::string> argv = m_watch.send;
        argv.push_back(regression.mail);
        Expected<void> sent = m_settings.send ? m_settings.send(argv) : run_send(argv);
        if (!sent) {
            m_log("sending " + regression.mail + " failed: " + sent.error().message +
                  " (the mail stays in the outbox)");
            return {};
        }
        regression.sent = true;
        return m_db.update_watch_regression(regression);
    }

    static Expected<void> run_send(const std::vector<std::string>& argv) {
        proc::RunResult result = RIG_TRY(proc::run(argv));
        if (result.exit_code != 0)
            return fail(ErrorKind::infra, argv.front() + " exited with " +
                                              std::to_string(result.exit_code) + ": " + result.err);
        return {};
    }

    // The regressions this head no longer shows: fixed by it.
    Expected<void> record_fixes(const store::WatchHead& head, const RunSamples& now) {
        std::set<std::pair<std::string, std::string>> still;
        for (const store::WatchFinding& finding : RIG_TRY(m_db.watch_findings(head.id)))
            if (finding.status == core::FindingStatus::reported ||
                finding.status == core::FindingStatus::linked ||
                finding.status == core::FindingStatus::inconclusive ||
                finding.status == core::FindingStatus::stopped)
                still.insert({finding.cell_key, finding.criterion});
        for (store::WatchRegression regression : RIG_TRY(m_db.watch_regressions(m_name))) {
            if (regression.status != core::RegressionStatus::open ||
                !now.by_key.count(regression.cell_key) ||
                still.count({regression.cell_key, regression.criterion}))
                continue;
            if (!RIG_TRY(m_branch.is_ancestor(regression.culprit, head.commit)))
                continue;
            const std::optional<std::string> unlike = RIG_TRY(unlike_found_on(regression, now));
            if (!unlike) {
                m_log(short_sha(head.commit) + " no longer shows " + regression.subject +
                      " against the good heads, but is not better than " +
                      short_sha(regression.found_on) + ", where it was found, under " +
                      regression.criterion + ": not its fix yet");
                continue;
            }
            regression.status = core::RegressionStatus::fixed;
            regression.fixed_in = head.commit;
            RIG_TRY(m_db.update_watch_regression(regression));
            m_log("fixed: " + regression.subject + " no longer shows at " + short_sha(head.commit));
        }
        return {};
    }

    // How the head the regression was found on is worse than `now` under its criterion
    // (the screen, with this head as the baseline), or nullopt when it is not: a head that
    // only stopped looking worse than the good heads may be noise, or half a fix. Without
    // that head's samples or the criterion (dropped from the scenario) there is nothing to
    // hold it against: "" then.
    Expected<std::optional<std::string>> unlike_found_on(const store::WatchRegression& regression,
                                                         const RunSamples& now) {
        auto criterion = std::find_if(m_criteria.begin(), m_criteria.end(), [&](const auto& c) {
            return c.text == regression.criterion;
        });
        if (criterion == m_criteria.end())
            return std::optional<std::string>("");
        for (const store::WatchHead& found : RIG_TRY(m_db.watch_heads(m_name))) {
            if (found.commit != regression.found_on || found.run_id == 0)
                continue;
            RunSamples then = RIG_TRY(samples_of_run(m_db, found.run_id));
            auto samples = then.by_key.find(regression.cell_key);
            if (samples == then.by_key.end())
                break;
            return screen(criterion->parsed, now.by_key.at(regression.cell_key), samples->second);
        }
        return std::optional<std::string>("");
    }

    // The cell as the mail's parameter lines give it.
    std::vector<std::pair<std::string, std::string>>
    parameters(const core::Cell& cell, const store::WatchHead& head) const {
        std::vector<std::pair<std::string, std::string>> out{{"kernel", cell.kernel_name},
                                                             {"config", cell.config}};
        for (const auto& [axis, value] : cell.params)
            out.emplace_back(axis, value);
        out.emplace_back("workload", m_scenario.workload.canonical());
        out.emplace_back("guest", std::to_string(m_scenario.guest.cpus) + " vCPUs, " +
                                      std::to_string(m_scenario.guest.memory_mib) + " MiB");
        out.emplace_back("environment", head.environment);
        return out;
    }

    const core::Scenario& m_scenario;
    const core::Watch& m_watch;
    store::Database& m_db;
    const Settings& m_settings;
    const std::atomic<bool>& m_interrupted;
    Log m_log;
    Branch m_branch;
    std::string m_name;
    std::vector<Criterion> m_criteria;
    std::string m_reference; // its commit, once resolved
    int m_reports = 0;
};

} // namespace

std::string watch_name(const core::Scenario& scenario) {
    return scenario.name + ":" + (scenario.watch ? scenario.watch->branch : "");
}

std::string_view to_string(RoundEnd end) {
    switch (end) {
    case RoundEnd::nothing_moved:
        return "nothing moved";
    case RoundEnd::skipped:
        return "skipped";
    case RoundEnd::tested:
        return "tested";
    case RoundEnd::interrupted:
        return "interrupted";
    }
    return "?";
}

Expected<RoundResult> run_round(const core::Scenario& scenario, store::Database& db,
                                const Settings& settings, const std::atomic<bool>& interrupted,
                                std::ostream& log) {
    if (!scenario.watch)
        return fail(ErrorKind::usage, scenario.file + ": the scenario has no watch: section");
    Round round(scenario, db, settings, interrupted, log);
    RoundResult result = RIG_TRY(round.run());
    // The dashboard follows every head tested; a failure to write it loses nothing else.
    const fs::path dashboard = dashboard_folder(scenario);
    if (!dashboard.empty() &&
        (result.end != RoundEnd::nothing_moved || !fs::exists(dashboard / "index.html")))
        if (auto written = write_dashboard(scenario, db); !written)
            Log(log, *settings.clock)("the dashboard was not written: " + written.error().message);
    return result;
}

} // namespace rig::watch
