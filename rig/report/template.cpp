// SPDX-License-Identifier: MIT
// Mustache rendering of report views.
#include "report/template.hpp"

#include "report/html.hpp"

#include <kainjow/mustache.hpp>

extern const char rig_report_page_html[];
extern const char rig_report_style_css[];
extern const char rig_report_summary_txt[];
extern const char rig_report_table_txt[];
extern const char rig_report_bisect_mail_txt[];
extern const char rig_report_watch_mail_txt[];
extern const char rig_report_history_html[];

namespace rig::report {

namespace {

namespace mustache = kainjow::mustache;

mustache::data to_data(const util::Json& value) {
    if (value.is_object()) {
        mustache::data out;
        for (const auto& [key, item] : value.items())
            out.set(key, to_data(item));
        return out;
    }
    if (value.is_array()) {
        mustache::data out(mustache::data::type::list);
        for (const util::Json& item : value)
            out.push_back(to_data(item));
        return out;
    }
    if (value.is_string())
        return mustache::data(value.get<std::string>());
    if (value.is_boolean())
        return mustache::data(value.get<bool>());
    if (value.is_null())
        return mustache::data(false);
    return mustache::data(value.dump()); // a number as JSON writes it
}

} // namespace

const char* builtin_template(Builtin which) {
    switch (which) {
    case Builtin::page_html:
        return rig_report_page_html;
    case Builtin::page_style:
        return rig_report_style_css;
    case Builtin::summary_text:
        return rig_report_summary_txt;
    case Builtin::table_text:
        return rig_report_table_txt;
    case Builtin::bisect_mail:
        return rig_report_bisect_mail_txt;
    case Builtin::watch_mail:
        return rig_report_watch_mail_txt;
    case Builtin::history_html:
        return rig_report_history_html;
    }
    return "";
}

Expected<std::string> render_template(const std::string& text, const util::Json& view,
                                      const std::string& origin) {
    mustache::mustache tmpl(text);
    if (!tmpl.is_valid())
        return fail(ErrorKind::usage, origin + ": " + tmpl.error_message());
    // The HTML report's own escaper, so that a page rendered from its template reads
    // byte for byte as the one rig built before templates.
    tmpl.set_custom_escape([](const std::string& raw) { return escape_html(raw); });
    std::string out = tmpl.render(to_data(view));
    if (!tmpl.is_valid())
        return fail(ErrorKind::usage, origin + ": " + tmpl.error_message());
    return out;
}

} // namespace rig::report
