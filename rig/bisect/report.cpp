// SPDX-License-Identifier: MIT
// The bisect's report, mail summary and status table.
#include "bisect/report.hpp"

#include "bisect/context.hpp"
#include "bisect/step.hpp"
#include "kernel/build.hpp"
#include "kernel/series.hpp"
#include "report/changes.hpp"
#include "report/table.hpp"
#include "report/template.hpp"
#include "run/reproducer.hpp"
#include "util/hash.hpp"
#include "util/json.hpp"
#include "util/mail.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace rig::bisect {

namespace {

// The false discovery rate of the "what changed" block's rank-tested lines.
constexpr double k_changes_fdr = 0.05;

// What a metric criterion's verdicts rest on: the endpoints' spread, the rule it chose and
// the samples each step took. The plan is made again from the stored endpoint samples,
// as run_bisect made it.
std::string metric_confidence(const Context& context) {
    const auto* bad_step = find_step(context, core::StepRole::bad_endpoint);
    const auto* good_step = find_step(context, core::StepRole::good_endpoint);
    if (!bad_step || !good_step)
        return "";
    MetricPlan plan =
        plan_metric(context.criterion, {values_of(context, samples_of(context, *good_step)),
                                        values_of(context, samples_of(context, *bad_step))});
    std::string out = describe_plan(context.criterion, plan) + "; " +
                      std::to_string(bad_step->samples.size()) + " samples at BAD, " +
                      std::to_string(good_step->samples.size()) + " at GOOD";
    std::vector<size_t> per_commit;
    for (const auto& step : context.steps)
        if (step.role == core::StepRole::bisect && !step.samples.empty())
            per_commit.push_back(step.samples.size());
    if (!per_commit.empty()) {
        auto [least, most] = std::minmax_element(per_commit.begin(), per_commit.end());
        out += ", " + std::to_string(*least) +
               (*least == *most ? "" : "-" + std::to_string(*most)) + " per commit (" +
               std::to_string(per_commit.size()) + " commits)";
    }
    if (const auto* culprit = find_step(context, core::StepRole::verify_culprit))
        out +=
            ", " + std::to_string(culprit->samples.size()) + " each for the culprit and its parent";
    return out;
}

// The tests behind a duration criterion's verdicts, counted by step: Welch's t-test, or
// Mann-Whitney U once a commit and an endpoint both have 8 timings (values.cpp's rule).
std::string duration_tests(const Context& context) {
    const auto* bad_step = find_step(context, core::StepRole::bad_endpoint);
    const auto* good_step = find_step(context, core::StepRole::good_endpoint);
    if (!bad_step || !good_step)
        return "Welch's t-test";
    size_t good = values_of(context, samples_of(context, *good_step)).size();
    size_t bad = values_of(context, samples_of(context, *bad_step)).size();
    std::map<std::string, int> steps_by_test;
    for (const auto& step : context.steps) {
        if (step.role == core::StepRole::bad_endpoint || step.role == core::StepRole::good_endpoint)
            continue;
        size_t values = values_of(context, samples_of(context, step)).size();
        if (values < 2)
            continue;
        std::set<std::string> tests{std::string(core::test_name(difference_test(values, good))),
                                    std::string(core::test_name(difference_test(values, bad)))};
        ++steps_by_test[util::join(std::vector<std::string>(tests.begin(), tests.end()), " and ")];
    }
    if (steps_by_test.size() <= 1)
        return steps_by_test.empty() ? "Welch's t-test" : steps_by_test.begin()->first;
    std::vector<std::string> parts;
    for (const auto& [test, count] : steps_by_test)
        parts.push_back(test + " (" + std::to_string(count) + " steps)");
    return util::join(parts, ", ");
}

std::string duration_confidence(const Context& context) {
    return "each verdict compares the commit's timings with both endpoints' (" +
           std::to_string(context.options.samples) + " samples each) by " +
           duration_tests(context) + " (alpha 0.05); commits that matched neither within " +
           std::to_string(std::max(context.options.max_samples, context.options.samples)) +
           " samples were skipped, not guessed";
}

std::string functional_confidence(const Context& context) {
    const auto* bad_step = find_step(context, core::StepRole::bad_endpoint);
    if (!bad_step)
        return "";
    const bool errors = context.criterion.kind == CriterionKind::errors;
    ErrorModel model = errors ? endpoint_model(context) : ErrorModel{};
    Reproduction seen =
        count_reproduction(context.criterion, samples_of(context, *bad_step), model);
    const auto& options = context.options;
    SamplePlan plan =
        plan_samples(seen.reproduced, seen.usable, options.confidence, options.max_samples);
    std::string out = "reproduced in " + std::to_string(seen.reproduced) + " of " +
                      std::to_string(seen.usable) + " samples at BAD (a rate of at least " +
                      util::fixed(plan.rate, 2) + " with " +
                      std::to_string(static_cast<int>(k_rate_level * 100)) +
                      "% confidence); a good verdict took " + std::to_string(plan.samples) +
                      " clean samples, so a commit as bad as that passes as good with "
                      "probability at most " +
                      util::fixed((1 - plan.confidence) * 100, 1) + "% (confidence " +
                      util::fixed(plan.confidence * 100, 1) + "%)";
    for (const std::string& part : {describe_regression(model), describe_strays(model)})
        if (!part.empty())
            out += "; " + part;
    if (find_step(context, core::StepRole::verify_parent)) {
        SamplePlan check = plan_verification(seen.reproduced, seen.usable, options.confidence,
                                             options.max_samples);
        out +=
            "; verification: the parent passed " +
            std::to_string(std::max(options.samples, check.samples)) +
            " clean samples (confidence " + util::fixed(check.confidence * 100, 2) +
            "%), the culprit had to reproduce more often than the parent and GOOD at Fisher p < " +
            util::format_p(k_verify_alpha, util::PStyle::three_significant);
    }
    return out;
}

// The confidence behind the verdicts, as the criterion gives it.
std::string confidence_of(const Context& context) {
    switch (context.criterion.kind) {
    case CriterionKind::duration:
        return duration_confidence(context);
    case CriterionKind::metric:
        return metric_confidence(context);
    default:
        return functional_confidence(context);
    }
}

// "switch 32/32: CONFIG_X=y (was not set)" for a commit of a config bisect, "GOOD's config
// (base,release)" for its GOOD.
std::string config_position(const Context& context, const std::string& sha) {
    auto made = switches_at(context, sha);
    if (!made)
        return "";
    if (*made == 0)
        return "GOOD's config (" + context.options.good_config + ")";
    return "switch " + std::to_string(*made) + "/" + std::to_string(context.switches.size()) +
           ": " + switch_text(context.switches[*made - 1]);
}

// The .config a step's kernel was built with, from its build folder.
std::optional<kernel::ConfigValues> built_config(const Context& context,
                                                 const store::BisectStep& step) {
    auto values = kernel::built_config(commit_request(context, commit_cell(context, step.commit)),
                                       context.settings.cache_dir);
    return values ? *values : std::nullopt;
}

// A config bisect's culprit: what olddefconfig changed from the parent's .config to the
// culprit's, the set of options that turns the result bad together; "" when not known.
std::string changed_together(const Context& context) {
    const auto* culprit = find_step(context, core::StepRole::verify_culprit);
    const auto* parent = find_step(context, core::StepRole::verify_parent);
    if (context.config_commits.empty() || !culprit || !parent)
        return "";
    auto after = built_config(context, *culprit);
    auto before = built_config(context, *parent);
    if (!after || !before)
        return "";
    std::vector<std::string> changes;
    for (const ConfigSwitch& change : config_switches(*before, *after))
        changes.push_back(switch_text(change));
    return util::join(changes, ", ");
}

// "patch 2/3 (0002-9p-always-ask.patch)" for a commit of a series bisect, "the series'
// base" for its GOOD; a config bisect's switch (above); "" for any other commit.
std::string series_position(const Context& context, const std::string& sha) {
    if (!context.config_commits.empty())
        return config_position(context, sha);
    if (context.series_commits.empty())
        return "";
    auto applied = series_patches_at(context, sha);
    if (!applied)
        return "";
    if (*applied == 0)
        return "the series' base";
    return "patch " + std::to_string(*applied) + "/" +
           std::to_string(context.series_commits.size()) + " (" +
           context.record.series[*applied - 1].name + ")";
}

std::string describe(const Context& context, const std::string& sha) {
    auto commit = context.history->describe(sha);
    std::string position = series_position(context, sha);
    return (commit ? short_sha(sha) + " (\"" + commit->subject + "\")" : short_sha(sha)) +
           (position.empty() ? "" : ", " + position);
}

std::string truncated(const std::string& text, size_t most) {
    return text.size() > most ? text.substr(0, most - 3) + "..." : text;
}

std::string steps_table(const Context& context) {
    report::Table table({{"#", report::Align::right},
                         {"role"},
                         {"commit"},
                         {"subject"},
                         {"build"},
                         {"samples", report::Align::right},
                         {"verdict"},
                         {"evidence"}});
    for (size_t i = 0; i < context.steps.size(); ++i) {
        const auto& step = context.steps[i];
        auto commit = context.history->describe(step.commit);
        table.add_row(
            {std::to_string(i + 1), std::string(core::to_string(step.role)),
             short_sha(step.commit) + (step.role == core::StepRole::verify_revert ? "+revert" : ""),
             truncated(commit ? commit->subject : "", 40), build_label(step),
             std::to_string(step.samples.size()), std::string(core::to_string(step.verdict)),
             truncated(step.evidence, 90)});
    }
    return table.to_text();
}

// A regular expression that matches `text` literally (ECMAScript).
std::string literal_regex(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos)
            out += '\\';
        out += c;
    }
    return out;
}

// What to try when a bisect names no verified culprit.
std::string next_step(const Context& context) {
    const auto& options = context.options;
    std::string out = "take more samples per commit (--samples " +
                      std::to_string(std::max(2 * options.samples, 5)) + " --max-samples " +
                      std::to_string(2 * options.max_samples) + ")";
    switch (context.criterion.kind) {
    case CriterionKind::errors: {
        ErrorModel model = endpoint_model(context);
        if (model.targets.empty())
            break;
        // The message, after the last operand: what every line of the family says.
        std::string example = model.families.at(*model.targets.begin()).example;
        auto colon = example.rfind(": ");
        std::string message = colon == std::string::npos ? example : example.substr(colon + 2);
        out += ", or bisect on the regression's own message with --criterion 'signature:" +
               literal_regex(message) + "'";
        break;
    }
    case CriterionKind::duration:
        out += ", or bisect on an exact count that moves with it (--criterion metric:NAME)";
        break;
    default:
        break;
    }
    return out;
}

// What the regression changed: every sample of a commit judged good against every sample
// of one judged bad, so that a count the culprit moved reads as exact over all of them and
// the block names what else moved with the criterion. Empty without both sides.
std::string changes_block(const Context& context) {
    report::CellResult good, bad;
    for (const auto& step : context.steps) {
        if (step.verdict != core::Verdict::good && step.verdict != core::Verdict::bad)
            continue;
        for (const core::Sample& sample : samples_of(context, step))
            report::tally_sample(step.verdict == core::Verdict::good ? good : bad, sample);
    }
    if (good.durations.empty() || bad.durations.empty())
        return "";
    report::finish(good);
    report::finish(bad);
    return report::changes_text(
        report::what_changed(good, bad, k_changes_fdr),
        "what changed from the commits judged good (" + std::to_string(good.durations.size()) +
            " samples) to those judged bad (" + std::to_string(bad.durations.size()) + " samples):",
        false);
}

// The steps as a mail lists them: what each commit showed.
util::Json shown_steps(const Context& context) {
    util::Json out = util::Json::array();
    for (const auto& step : context.steps) {
        auto commit = context.history->describe(step.commit);
        out.push_back({{"role", std::string(core::to_string(step.role))},
                       {"commit", short_sha(step.commit)},
                       {"subject", commit ? commit->subject : ""},
                       {"verdict", std::string(core::to_string(step.verdict))},
                       {"evidence", step.evidence}});
    }
    return out;
}

// The summary to paste into a mail: reports/bisect-mail.txt.mustache, whose names these
// are. A culprit only when it verified; otherwise the text says the bisect was
// inconclusive, what each commit showed, and what to try next.
Expected<std::string> mail_summary(const Context& context, const std::string& confidence,
                                   const Cost& cost, const std::string& changes) {
    const auto& info = context.info;
    util::Json view{{"id", info.id},
                    {"cell",
                     {{"kernel", context.cell.kernel_name},
                      {"config", context.cell.config},
                      {"params", util::join(context.cell.param_pairs(), ", ")}}},
                    {"criterion", info.criterion},
                    {"good", describe(context, info.good)},
                    {"bad", describe(context, info.bad)},
                    {"good_short", short_sha(info.good)},
                    {"bad_short", short_sha(info.bad)},
                    {"builds", cost.builds},
                    {"boots", cost.boots},
                    {"steps", context.steps.size()}};
    if (info.status == core::BisectStatus::culprit) {
        auto commit = RIG_TRY(context.history->describe(info.culprit));
        view["confirmed"] = true;
        view["commit"] = {{"sha", commit.sha},
                          {"subject", commit.subject},
                          {"author", commit.author},
                          {"date", commit.date}};
        const auto* culprit_step = find_step(context, core::StepRole::verify_culprit);
        const auto* parent_step = find_step(context, core::StepRole::verify_parent);
        if (culprit_step && parent_step) {
            view["verified"] = true;
            view["culprit"] = {{"verdict", std::string(core::to_string(culprit_step->verdict))},
                               {"evidence", culprit_step->evidence}};
            view["parent"] = {{"commit", short_sha(parent_step->commit)},
                              {"verdict", std::string(core::to_string(parent_step->verdict))},
                              {"evidence", parent_step->evidence}};
        }
        if (const auto* revert_step = find_step(context, core::StepRole::verify_revert))
            view["revert"] = {{"verdict", std::string(core::to_string(revert_step->verdict))},
                              {"evidence", revert_step->evidence}};
    } else {
        view["inconclusive"] = true;
        view["result"] = info.message;
        view["shown"] = shown_steps(context);
        view["next"] = next_step(context);
    }
    if (!confidence.empty())
        view["confidence"] = confidence;
    if (!changes.empty())
        view["what_changed"] = changes;
    if (!context.config_commits.empty()) {
        view["config"] = {{"good", context.options.good_config},
                          {"bad", context.options.bad_config},
                          {"switches", context.switches.size()}};
        size_t made = switches_at(context, info.culprit).value_or(0);
        if (info.status == core::BisectStatus::culprit && made > 0) {
            auto base = RIG_TRY(context.history->describe(context.record.commit));
            view["config"]["option"] = switch_text(context.switches[made - 1]);
            view["config"]["number"] = made;
            view["config"]["commit"] = short_sha(base.sha) + " (\"" + base.subject + "\")";
            view["config"]["together"] = changed_together(context);
        }
    }
    if (!context.series_commits.empty()) {
        const core::StoredFile& cover = context.record.series_cover;
        view["series"] = {{"cover", cover.text.empty() ? std::string("(no cover letter)")
                                                       : kernel::read_mail(cover.text).subject},
                          {"patches", context.series_commits.size()}};
        if (info.status == core::BisectStatus::culprit)
            view["series"]["patch"] = series_position(context, info.culprit);
    }
    return report::render_template(report::builtin_template(report::Builtin::bisect_mail), view,
                                   "reports/bisect-mail.txt.mustache");
}

// The first bad commit, once verified.
Expected<std::string> culprit_summary(const Context& context) {
    auto commit = RIG_TRY(context.history->describe(context.info.culprit));
    std::ostringstream out;
    out << "\nfirst bad commit: " << commit.sha << "\n"
        << "  subject: " << commit.subject << "\n"
        << "  author:  " << commit.author << "\n"
        << "  date:    " << commit.date << "\n";
    if (std::string position = series_position(context, context.info.culprit); !position.empty())
        out << (context.config_commits.empty() ? "  series:  " : "  config:  ") << position << "\n";
    if (std::string together = changed_together(context); !together.empty())
        out << "  the .config changed together (the set that turns it bad): " << together << "\n";
    return out.str();
}

} // namespace

Expected<std::string> render_status(store::Database& db, int64_t id) {
    std::vector<store::BisectInfo> all = RIG_TRY(db.bisects());
    report::Table table({{"id", report::Align::right},
                         {"status"},
                         {"cell"},
                         {"criterion"},
                         {"good..bad"},
                         {"steps", report::Align::right},
                         {"culprit"},
                         {"updated"}});
    std::string messages;
    for (const auto& info : all) {
        if (id != 0 && info.id != id)
            continue;
        auto steps = RIG_TRY(db.bisect_steps(info.id));
        table.add_row({std::to_string(info.id), std::string(core::to_string(info.status)),
                       info.cell_id, info.criterion,
                       short_sha(info.good) + ".." + short_sha(info.bad),
                       std::to_string(steps.size()), short_sha(info.culprit), info.updated_at});
        if (id != 0 && !info.message.empty())
            messages += std::string(core::to_string(info.status)) + ": " + info.message + "\n";
    }
    if (id != 0 && table.rows() == 0)
        return fail(ErrorKind::usage, "no bisect " + std::to_string(id) + " in the database");
    if (table.rows() == 0)
        return std::string("no bisects in the database\n");
    return table.to_text() + (messages.empty() ? "" : "\n" + messages);
}

namespace {

// The criterion's number on each side, as the mail's table gives it.
struct Sides {
    std::vector<double> good;
    std::vector<double> bad;
};

Sides judged_values(const Context& context) {
    Sides sides;
    for (const auto& step : context.steps) {
        if (step.verdict != core::Verdict::good && step.verdict != core::Verdict::bad)
            continue;
        std::vector<double> values = values_of(context, samples_of(context, step));
        auto& side = step.verdict == core::Verdict::good ? sides.good : sides.bad;
        side.insert(side.end(), values.begin(), values.end());
    }
    return sides;
}

std::string criterion_name(const Criterion& criterion) {
    return criterion.kind == CriterionKind::metric ? criterion.metric : "duration";
}

} // namespace

Expected<CulpritFinding> culprit_finding(int64_t id, store::Database& db,
                                         const Settings& settings) {
    Context context = RIG_TRY(load(id, db, settings));
    const auto& info = context.info;
    if (info.status != core::BisectStatus::culprit)
        return fail(ErrorKind::usage, "bisect " + std::to_string(id) + " is " +
                                          std::string(core::to_string(info.status)) +
                                          ", not a verified culprit");
    CulpritFinding finding;
    auto commit = RIG_TRY(context.history->describe(info.culprit));
    finding.culprit = commit.sha;
    finding.subject = commit.subject;
    finding.author = commit.author;
    finding.date = commit.date;
    finding.cell = context.cell;
    const auto* culprit_step = find_step(context, core::StepRole::verify_culprit);
    const auto* parent_step = find_step(context, core::StepRole::verify_parent);
    if (parent_step) {
        finding.parent = parent_step->commit;
        if (auto parent = context.history->describe(parent_step->commit))
            finding.parent_subject = parent->subject;
    }
    if (culprit_step && parent_step)
        finding.verification =
            "the commit tested " + std::string(core::to_string(culprit_step->verdict)) +
            " again (" + culprit_step->evidence + "); its parent tested " +
            std::string(core::to_string(parent_step->verdict)) + " (" + parent_step->evidence + ")";
    if (compares_values(context.criterion)) {
        Sides sides = judged_values(context);
        Spread good = spread_of(sides.good);
        Spread bad = spread_of(sides.bad);
        const std::string name = criterion_name(context.criterion);
        if (good.n > 0 && bad.n > 0 && good.median != 0) {
            const double change = (bad.median - good.median) / good.median * 100;
            finding.headline = util::fixed(std::abs(change), 1) + "% " +
                               (change >= 0 ? "regression" : "drop") + " of " + name;
        } else {
            finding.headline = "regression of " + name;
        }
        finding.comparison = name + ", parent side: " + to_text(good) + "\n" + name +
                             ", culprit side: " + to_text(bad) + "\n";
    } else if (context.criterion.kind == CriterionKind::outcome) {
        finding.headline = context.criterion.pattern == "panic" ? "kernel panic" : "guest hang";
        finding.comparison = finding.verification;
    } else {
        ErrorModel model = endpoint_model(context);
        std::string line = model.targets.empty()
                               ? std::string(k_silent_family)
                               : model.families.at(*model.targets.begin()).example;
        finding.headline = "new error: " + truncated(line, 60);
        finding.comparison = describe_regression(model);
    }
    finding.changes = changes_block(context);
    finding.confidence = confidence_of(context);
    finding.steps = steps_table(context);
    Cost cost = RIG_TRY(cost_of(context));
    finding.cost = std::to_string(cost.builds) + " kernel builds (" +
                   util::fixed(cost.build_seconds / 60, 1) + " min), " +
                   std::to_string(cost.boots) + " guest boots, " +
                   std::to_string(context.steps.size()) + " steps";
    return finding;
}

Expected<void> write_culprit_reproducer(int64_t id, store::Database& db, const Settings& settings,
                                        const std::string& kernel_config,
                                        const std::filesystem::path& tarball) {
    Context context = RIG_TRY(load(id, db, settings));
    const store::BisectStep* step = find_step(context, core::StepRole::verify_culprit);
    if (context.info.status != core::BisectStatus::culprit || !step)
        return fail(ErrorKind::usage,
                    "bisect " + std::to_string(id) + " has no verified culprit to reproduce");
    std::error_code ec;
    for (const core::Sample& sample : samples_of(context, *step)) {
        const std::filesystem::path dir =
            samples_dir(context) / step->cell_id / std::to_string(sample.repetition);
        if (!std::filesystem::is_regular_file(dir / run::k_recipe_script, ec))
            continue;
        run::ReproducerParts parts;
        parts.sample_dir = dir;
        parts.workload = context.scenario.workload;
        parts.kernel_config = kernel_config;
        parts.about = "rig's sample of " + context.cell.label() + " (scenario " +
                      context.scenario.name + ") on commit " + context.info.culprit +
                      ", the culprit of bisect " + std::to_string(id) + " under " +
                      context.info.criterion + ", as its verification tested it bad again.\n";
        return run::write_reproducer(parts, tarball);
    }
    return fail(ErrorKind::infra, "no sample of bisect " + std::to_string(id) +
                                      "'s verification keeps a reproducer recipe");
}

Expected<std::string> render_report(int64_t id, store::Database& db, const Settings& settings) {
    Context context = RIG_TRY(load(id, db, settings));
    const auto& info = context.info;
    std::ostringstream out;
    out << "bisect " << id << ": " << core::to_string(info.status) << "\n"
        << "scenario: " << context.scenario.name << " (" << context.options.scenario.string()
        << ")\n"
        << "cell:     " << context.cell.id << " " << context.cell.label() << "\n"
        << "criterion: " << info.criterion << "\n"
        << "good:     " << describe(context, info.good) << "\n"
        << "bad:      " << describe(context, info.bad) << "\n";
    if (!info.message.empty())
        out << "result:   " << info.message << "\n";
    out << "\n" << steps_table(context) << "\n";

    Cost cost = RIG_TRY(cost_of(context));
    size_t commits = RIG_TRY(context.history->count(info.good, info.bad));
    size_t skips = std::count_if(context.steps.begin(), context.steps.end(), [](const auto& s) {
        return s.role == core::StepRole::bisect &&
               (s.verdict == core::Verdict::skip || s.verdict == core::Verdict::unsure);
    });
    out << "cost: " << cost.builds << " builds (" << util::fixed(cost.build_seconds / 60, 1)
        << " min), " << cost.boots << " boots; " << commits << " commits in range, bound "
        << build_bound_text(commits, round_size(context)) << " builds plus " << skips
        << " skipped\n";

    std::string confidence = confidence_of(context);
    if (!confidence.empty())
        out << "confidence: " << confidence << "\n";
    const std::string changes = changes_block(context);
    if (!changes.empty())
        out << "\n" << changes;
    // A mail for every bisect that has ended with a finding or without one; a culprit
    // only once it verified.
    switch (info.status) {
    case core::BisectStatus::culprit:
        out << RIG_TRY(culprit_summary(context));
        [[fallthrough]];
    case core::BisectStatus::unverified:
    case core::BisectStatus::inconclusive:
        out << "\n--- summary for a mail ---\n"
            << RIG_TRY(mail_summary(context, confidence, cost, changes));
        break;
    default:
        break;
    }
    return out.str();
}

Expected<std::string> series_reply(int64_t id, store::Database& db, const Settings& settings,
                                   const std::string& from,
                                   std::chrono::system_clock::time_point date) {
    Context context = RIG_TRY(load(id, db, settings));
    const auto& info = context.info;
    if (context.series_commits.empty())
        return fail(ErrorKind::usage, "bisect " + std::to_string(id) +
                                          " is not over a series (`rig bisect start --series`)");
    if (context.record.series_cover.text.empty())
        return fail(ErrorKind::usage, "the series of bisect " + std::to_string(id) +
                                          " has no cover letter to reply to");
    if (info.status != core::BisectStatus::culprit &&
        info.status != core::BisectStatus::unverified &&
        info.status != core::BisectStatus::inconclusive)
        return fail(ErrorKind::usage, "bisect " + std::to_string(id) + " is " +
                                          std::string(core::to_string(info.status)) +
                                          ": it has no finding to reply with yet");
    kernel::SeriesMail cover = kernel::read_mail(context.record.series_cover.text);
    Cost cost = RIG_TRY(cost_of(context));
    std::string body =
        RIG_TRY(mail_summary(context, confidence_of(context), cost, changes_block(context)));
    // The summary begins with the subject it would have as a mail of its own.
    if (util::starts_with(body, "Subject: "))
        body = std::string(util::trim(body.substr(body.find('\n') + 1)));

    // The culprit's author first, then whoever the series went to.
    util::MessageHeaders headers;
    headers.envelope = "rig-bisect";
    headers.from = from;
    headers.to = cover.from;
    if (info.status == core::BisectStatus::culprit)
        headers.to = RIG_TRY(context.history->describe(info.culprit)).author;
    const std::string to_address = util::parse_mailbox(headers.to).address;
    for (const std::string& list : {cover.from, cover.to, cover.cc})
        for (const std::string& address : util::split_addresses(list))
            if (util::parse_mailbox(address).address != to_address &&
                std::find(headers.cc.begin(), headers.cc.end(), address) == headers.cc.end())
                headers.cc.push_back(address);
    headers.references = cover.references;
    if (!cover.message_id.empty())
        headers.references +=
            (headers.references.empty() ? "" : " ") + ("<" + cover.message_id + ">");
    headers.subject = cover.subject;
    if (!util::starts_with(headers.subject, "Re: "))
        headers.subject = "Re: " + headers.subject;
    headers.date = date;
    headers.in_reply_to = cover.message_id;
    // The same bisect and finding give the same message, written again or not.
    headers.message_id = "rig-bisect-" +
                         util::sha256_hex(cover.message_id + "\n" + info.good + "\n" + info.bad +
                                          "\n" + info.culprit + "\n" + info.cell_id)
                             .substr(0, 16) +
                         "@" + util::domain_of(from);
    return util::mbox_message(headers, body);
}

} // namespace rig::bisect
