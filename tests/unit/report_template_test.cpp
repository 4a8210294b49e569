// SPDX-License-Identifier: MIT
// Tests of report/template: mustache over JSON views, the HTML escaper, the embedded
// templates, and templates that do not parse.
#include "report/template.hpp"

#include <gtest/gtest.h>

using namespace rig;
using rig::util::Json;

namespace {

std::string render(const std::string& text, const Json& view) {
    auto out = report::render_template(text, view, "test.mustache");
    EXPECT_TRUE(out) << out.error().message;
    return out ? *out : "";
}

} // namespace

TEST(ReportTemplate, ValuesListsAndDottedNames) {
    Json view{{"title", "9p"},
              {"cells", Json::array({{{"case", "A"}, {"duration", {{"n", 3}, {"median", 1.5}}}},
                                     {{"case", "B"}, {"duration", nullptr}}})},
              {"notes", {"one", "two"}},
              {"ok", true},
              {"none", false}};
    EXPECT_EQ(render("{{title}}:{{#cells}} {{case}}={{duration.n}}/{{duration.median}}{{/cells}}"
                     "{{#notes}} [{{.}}]{{/notes}}{{#ok}} ok{{/ok}}{{#none}} none{{/none}}"
                     "{{^none}} not none{{/none}}",
                     view),
              "9p: A=3/1.5 B=/ [one] [two] ok not none");
}

TEST(ReportTemplate, EscapesAsTheHtmlReportDoes) {
    Json view{{"text", "a<b & \"c\" 'd'"}};
    EXPECT_EQ(render("{{text}}|{{{text}}}", view),
              "a&lt;b &amp; &quot;c&quot; &#39;d&#39;|a<b & \"c\" 'd'");
}

TEST(ReportTemplate, BrokenTemplateIsAUsageErrorNamingItsFile) {
    auto out = report::render_template("{{#cells}}open", Json::object(), "mine.mustache");
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().kind, ErrorKind::usage);
    EXPECT_NE(out.error().message.find("mine.mustache: "), std::string::npos);
}

TEST(ReportTemplate, SummaryIsTheTableThenABlankLineAndItsNotes) {
    const char* summary = report::builtin_template(report::Builtin::summary_text);
    EXPECT_EQ(render(summary, {{"table", "t\n"}, {"notes", Json::array()}, {"has_notes", false}}),
              "t\n");
    EXPECT_EQ(render(summary, {{"table", "t\n"}, {"notes", {"n1", "n2"}}, {"has_notes", true}}),
              "t\n\nn1\nn2\n");
}

TEST(ReportTemplate, EmbeddedPageCarriesItsStyle) {
    std::string page = report::builtin_template(report::Builtin::page_html);
    EXPECT_EQ(page.rfind("<!DOCTYPE html>\n", 0), 0u);
    EXPECT_NE(page.find("{{{style}}}"), std::string::npos);
    std::string style = report::builtin_template(report::Builtin::page_style);
    EXPECT_EQ(style.rfind("body {", 0), 0u);
}

// The bisect's mail of a verified culprit as rig wrote it before the template: every
// optional paragraph, then none of them; and of a bisect that names none.
TEST(ReportTemplate, BisectMailReadsAsBefore) {
    const char* mail = report::builtin_template(report::Builtin::bisect_mail);
    Json view{{"id", 4},
              {"commit",
               {{"sha", "c0ffee"},
                {"subject", "9p: check <writes>"},
                {"author", "A U Thor <a@example.org>"},
                {"date", "2023-01-01"}}},
              {"cell", {{"kernel", "linux"}, {"config", "base"}, {"params", "cache=loose, fs=9p"}}},
              {"criterion", "errors"},
              {"good", "900d (\"base\")"},
              {"bad", "bad0 (\"tip\")"},
              {"bad_short", "bad0"},
              {"good_short", "900d"},
              {"builds", 5},
              {"boots", 21},
              {"steps", 7},
              {"confirmed", true}};
    const std::string head = "Subject: [REGRESSION] 9p: check <writes>\n\n"
                             "rig bisected a regression in linux (base; cache=loose, fs=9p) under "
                             "the criterion errors,\nbetween good 900d (\"base\") and bad bad0 "
                             "(\"tip\").\n\nThe first bad commit is\n\n  commit c0ffee\n"
                             "  Author: A U Thor <a@example.org>\n  Date:   2023-01-01\n\n"
                             "      9p: check <writes>\n\n";
    const std::string tail = "Cost: 5 kernel builds, 21 guest boots, 7 steps.\n"
                             "Replay: `rig bisect log 4` prints the git bisect log.\n";
    EXPECT_EQ(render(mail, view), head + tail);
    view["verified"] = true;
    view["culprit"] = {{"verdict", "bad"}, {"evidence", "1 of 1 reproduce"}};
    view["parent"] = {{"commit", "abc123"}, {"verdict", "good"}, {"evidence", "3 of 3 clean"}};
    view["revert"] = {{"verdict", "good"}, {"evidence", "3 clean"}};
    view["confidence"] = "reproduced in 3 of 3";
    EXPECT_EQ(render(mail, view),
              head +
                  "Verified: the commit tested bad again (1 of 1 reproduce);\nits parent abc123 "
                  "tested good (3 of 3 clean).\nReverting it on bad0 tested good (3 clean).\n"
                  "Confidence: reproduced in 3 of 3.\n" +
                  tail);

    // Not verified: no culprit named, what each commit showed, and what to try next.
    view.erase("confirmed");
    view.erase("verified");
    view.erase("revert");
    view["inconclusive"] = true;
    view["result"] = "git named c0ffee but it did not verify";
    view["shown"] = Json::array({{{"role", "bad-endpoint"},
                                  {"commit", "bad0"},
                                  {"subject", "tip"},
                                  {"verdict", "bad"},
                                  {"evidence", "3 of 3 reproduce"}}});
    view["next"] = "take more samples per commit";
    std::string inconclusive = render(mail, view);
    EXPECT_EQ(inconclusive.find("The first bad commit is"), std::string::npos) << inconclusive;
    EXPECT_EQ(inconclusive.find("[REGRESSION]"), std::string::npos) << inconclusive;
    EXPECT_EQ(inconclusive,
              "Subject: [INCONCLUSIVE] rig bisect of linux 900d..bad0: errors\n\n"
              "rig bisected linux (base; cache=loose, fs=9p) under the criterion errors,\n"
              "between good 900d (\"base\") and bad bad0 (\"tip\"),\n"
              "and names no culprit: the bisect was inconclusive.\n\n"
              "Result: git named c0ffee but it did not verify\n\n"
              "What each commit showed:\n"
              "  bad-endpoint bad0 (\"tip\"): bad; 3 of 3 reproduce\n\n"
              "Next: take more samples per commit.\n"
              "Confidence: reproduced in 3 of 3.\n" +
                  tail);
}
