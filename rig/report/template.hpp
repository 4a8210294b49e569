// SPDX-License-Identifier: MIT
// Report templates: mustache texts from reports/, embedded at build time, or a user's
// own (`rig report --template FILE`), rendered with a JSON view of the report. The one
// place that includes the mustache library.
#pragma once

#include "util/error.hpp"
#include "util/json.hpp"

#include <string>

namespace rig::report {

// The templates rig carries: reports/page.html.mustache and reports/style.css, the
// text and markdown report's summary (reports/summary.txt.mustache) and the results table
// in it (reports/table.txt.mustache), and the bisect report's summary for a mail
// (reports/bisect-mail.txt.mustache), the watch's mail (reports/watch-mail.txt.mustache)
// and its history page (reports/history.html.mustache).
enum class Builtin {
    page_html,
    page_style,
    summary_text,
    table_text,
    bisect_mail,
    watch_mail,
    history_html,
};

const char* builtin_template(Builtin which);

// Renders `text` with `view`: objects are sections and dotted names, arrays are lists,
// strings and numbers are values, false and null are empty. {{name}} escapes &, <, >, "
// and ' as the HTML report does; {{{name}}} does not. A template that does not parse is
// a usage error naming `origin`.
Expected<std::string> render_template(const std::string& text, const util::Json& view,
                                      const std::string& origin);

} // namespace rig::report
