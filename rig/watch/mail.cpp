// SPDX-License-Identifier: MIT
// The report's headers, written here, and its body, from the template.
#include "watch/mail.hpp"

#include "report/template.hpp"
#include "run/reproducer.hpp"
#include "util/hash.hpp"
#include "util/json.hpp"
#include "util/mail.hpp"
#include "util/strings.hpp"

namespace rig::watch {

using util::short_sha;

namespace {

std::string indented(const std::string& text) {
    std::string out;
    for (const std::string& line : util::split(text, '\n'))
        out += (line.empty() ? "" : "\t") + line + "\n";
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

} // namespace

Expected<Mail> compose(const Report& report) {
    const bisect::CulpritFinding& finding = report.finding;
    Mail mail;
    mail.subject = "[" + report.tree + ":" + report.branch + "] " + short_sha(finding.culprit) +
                   " " + finding.subject + ": " + finding.headline;
    mail.message_id = "rig-watch." + short_sha(finding.culprit) + "." +
                      util::sha256_hex(report.tree + "\n" + report.branch + "\n" +
                                       report.cell_filter + "\n" + report.criterion)
                          .substr(0, 16) +
                      "@" + util::domain_of(report.from);

    std::vector<std::string> names, values;
    util::Json parameters = util::Json::array();
    for (const auto& [name, value] : report.parameters) {
        parameters.push_back({{"name", name}, {"value", value}});
        names.push_back(name);
        values.push_back(value);
    }
    util::Json view{
        {"headline", finding.headline},
        {"culprit", finding.culprit},
        {"culprit_short", short_sha(finding.culprit)},
        {"culprit_12", short_sha(finding.culprit)},
        {"subject", finding.subject},
        {"parent", finding.parent},
        {"parent_short", short_sha(finding.parent)},
        {"parent_subject", finding.parent_subject},
        {"tree", report.tree},
        {"branch", report.branch},
        {"repo", report.repo},
        {"head", report.head},
        {"cell", finding.cell.label()},
        {"parameters", parameters},
        {"parameter_names", util::join(names, "/")},
        {"parameter_values", util::join(values, "/")},
        {"from", report.from},
        {"comparison", finding.comparison},
        {"changes", finding.changes},
        {"verification", finding.verification},
        {"confidence", finding.confidence},
        {"cost", finding.cost},
        {"steps", indented(finding.steps)},
        {"bisect_log", indented(report.bisect_log)},
        {"scenario_file", report.scenario_file},
        {"scenario", report.scenario_text},
        {"cell_filter", report.cell_filter},
        {"criterion", report.criterion},
    };
    if (!report.kernel_config.empty())
        view["config"] = indented(report.kernel_config);
    if (!report.reproducer.empty()) {
        view["reproducer"] = report.reproducer;
        view["reproducer_folder"] = run::reproducer_folder(report.reproducer);
    }
    if (!report.archive.empty()) {
        std::string archive = report.archive;
        while (!archive.empty() && archive.back() == '/')
            archive.pop_back();
        view["closes"] = archive + "/" + mail.message_id;
    }
    std::string body =
        RIG_TRY(report::render_template(report::builtin_template(report::Builtin::watch_mail), view,
                                        "reports/watch-mail.txt.mustache"));

    util::MessageHeaders headers;
    headers.envelope = finding.culprit;
    headers.from = report.from;
    headers.to = report.to;
    headers.cc = report.cc;
    headers.subject = mail.subject;
    headers.date = report.date;
    headers.message_id = mail.message_id;
    mail.text = util::mbox_message(headers, body);
    return mail;
}

} // namespace rig::watch
