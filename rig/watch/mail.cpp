// SPDX-License-Identifier: MIT
// The report's headers, written here, and its body, from the template.
#include "watch/mail.hpp"

#include "report/template.hpp"
#include "run/reproducer.hpp"
#include "util/base64.hpp"
#include "util/hash.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

#include <ctime>

namespace rig::watch {

namespace {

std::string short_sha(const std::string& sha, size_t length = 12) {
    return sha.substr(0, length);
}

// The domain of "Name <user@domain>".
std::string domain_of(const std::string& address) {
    size_t at = address.rfind('@');
    if (at == std::string::npos)
        return "localhost";
    std::string domain = address.substr(at + 1);
    if (size_t end = domain.find('>'); end != std::string::npos)
        domain.resize(end);
    return domain.empty() ? "localhost" : domain;
}

// Mail wants CRLF-free lines and no line of a lone "From " that an mbox reader would take
// for the next message: such lines are quoted (mboxrd).
std::string mbox_body(const std::string& body) {
    std::string out;
    for (const std::string& line : util::split(body, '\n')) {
        size_t quotes = 0;
        while (quotes < line.size() && line[quotes] == '>')
            ++quotes;
        if (line.compare(quotes, 5, "From ") == 0)
            out += '>';
        out += line;
        out += '\n';
    }
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
        out.pop_back();
    return out;
}

std::string indented(const std::string& text) {
    std::string out;
    for (const std::string& line : util::split(text, '\n'))
        out += (line.empty() ? "" : "\t") + line + "\n";
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

} // namespace

std::string header_value(const std::string& text) {
    bool ascii = true;
    for (unsigned char c : text)
        ascii = ascii && c >= 0x20 && c < 0x7f;
    if (ascii)
        return text;
    return "=?UTF-8?B?" + util::base64_encode(text) + "?=";
}

std::string address_value(const std::string& address) {
    size_t open = address.find('<');
    if (open == std::string::npos)
        return address;
    std::string name = address.substr(0, open);
    while (!name.empty() && name.back() == ' ')
        name.pop_back();
    if (name.empty())
        return address.substr(open);
    std::string encoded = header_value(name);
    // A display name with specials is quoted; an encoded-word never is.
    if (encoded == name && name.front() != '"' &&
        name.find_first_of("()<>[]:;@\\,.\"") != std::string::npos)
        encoded = "\"" + name + "\"";
    return encoded + " " + address.substr(open);
}

std::string rfc5322_date(std::chrono::system_clock::time_point time) {
    std::time_t seconds = std::chrono::system_clock::to_time_t(time);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[64];
    std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S +0000", &utc);
    return text;
}

Expected<Mail> compose(const Report& report) {
    const bisect::CulpritFinding& finding = report.finding;
    Mail mail;
    mail.subject = "[" + report.tree + ":" + report.branch + "] " + short_sha(finding.culprit) +
                   " " + finding.subject + ": " + finding.headline;
    mail.message_id = "rig-watch." + short_sha(finding.culprit) + "." +
                      short_sha(util::sha256_hex(report.tree + "\n" + report.branch + "\n" +
                                                 report.cell_filter + "\n" + report.criterion),
                                16) +
                      "@" + domain_of(report.from);

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

    std::string text = "From " + finding.culprit + " Mon Sep 17 00:00:00 2001\n";
    text += "From: " + address_value(report.from) + "\n";
    text += "To: " + address_value(report.to) + "\n";
    if (!report.cc.empty()) {
        std::vector<std::string> cc;
        for (const std::string& address : report.cc)
            cc.push_back(address_value(address));
        text += "Cc: " + util::join(cc, ",\n\t") + "\n";
    }
    text += "Subject: " + header_value(mail.subject) + "\n";
    text += "Date: " + rfc5322_date(report.date) + "\n";
    text += "Message-ID: <" + mail.message_id + ">\n";
    text += "MIME-Version: 1.0\n";
    text += "Content-Type: text/plain; charset=UTF-8\n";
    text += "Content-Transfer-Encoding: 8bit\n";
    text += "\n" + mbox_body(body);
    mail.text = std::move(text);
    return mail;
}

} // namespace rig::watch
