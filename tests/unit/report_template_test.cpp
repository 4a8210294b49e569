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
