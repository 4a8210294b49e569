// SPDX-License-Identifier: MIT
// A watch's history drawn: the text tables, and the page's trend charts with the heads
// where a regression was found or fixed marked and the mails linked relative to the page.
#include "report/history.hpp"

#include <gtest/gtest.h>
#include <regex>

using namespace rig;

namespace {

// Five heads of one cell: 11 getattr requests, 141 from the third head on (found there,
// culprit abc...), 11 again on the fifth (fixed there); the fourth has no usable sample.
report::History five_heads() {
    report::History history;
    history.watch = "w:master";
    const char* commits[] = {"1111111111111111", "2222222222222222", "3333333333333333",
                             "4444444444444444", "5555555555555555"};
    core::HeadStatus statuses[] = {core::HeadStatus::good, core::HeadStatus::good,
                                   core::HeadStatus::bad, core::HeadStatus::bad,
                                   core::HeadStatus::good};
    for (int i = 0; i < 5; ++i) {
        store::WatchHead head;
        head.watch = history.watch;
        head.commit = commits[i];
        head.status = statuses[i];
        history.heads.push_back(head);
    }
    store::WatchRegression regression;
    regression.watch = history.watch;
    regression.culprit = "abcabcabcabcabcabc";
    regression.cell_key = "key1";
    regression.criterion = "metric:9p.work.getattr:+50%";
    regression.found_on = commits[2];
    regression.fixed_in = commits[4];
    regression.status = core::RegressionStatus::fixed;
    regression.subject = "9p: <always> ask";
    regression.mail = "/srv/rig/outbox/abcabcabcabc-key1.mbox";
    history.regressions.push_back(regression);
    report::Trend trend{"key1", "linux base fs=9p cache=loose", "9p.work.getattr", "", {}};
    for (double value : {11.0, 11.0, 141.0, -1.0, 11.0})
        trend.points.push_back(value < 0 ? report::TrendPoint{}
                                         : report::TrendPoint{value, size_t(3)});
    history.trends.push_back(trend);
    return history;
}

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

} // namespace

TEST(ReportHistory, TextHasTheHeadsTheRegressionAndATrendTableWithItsMarks) {
    std::string text = report::history_text(five_heads());
    EXPECT_NE(text.find("watch w:master: 5 heads, 1 regressions reported"), std::string::npos);
    EXPECT_NE(text.find("9p.work.getattr of linux base fs=9p cache=loose:"), std::string::npos)
        << text;
    // The head without a value reads "-", and the marks sit on their heads' rows.
    EXPECT_NE(text.find("4  444444444444  bad"), std::string::npos) << text;
    std::regex found("333333333333 +bad +141 +3 +found metric:9p.work.getattr:\\+50%: culprit "
                     "abcabcabcabc");
    EXPECT_TRUE(std::regex_search(text, found)) << text;
    std::regex fixed("555555555555 +good +11 +3 +fixed: culprit abcabcabcabc");
    EXPECT_TRUE(std::regex_search(text, fixed)) << text;
}

TEST(ReportHistory, TheTrendChartHasAPointPerValueAndItsLineBreaksAtAGap) {
    report::History history = five_heads();
    std::string svg = report::trend_svg(history, 0);
    EXPECT_EQ(count(svg, "<circle class=\"point"), 4u) << svg;
    // Heads 1-3, then 5 alone: two lines, the second of one point.
    EXPECT_EQ(count(svg, "<polyline class=\"trend-line\""), 2u) << svg;
    EXPECT_EQ(count(svg, "<g class=\"found\" data-head=\"333333333333\""), 1u) << svg;
    EXPECT_EQ(count(svg, "<g class=\"fixed\" data-head=\"555555555555\""), 1u) << svg;
    // 141 is the highest point: the scale tops at a round 200 and it sits below the top.
    EXPECT_NE(svg.find(">200</text>"), std::string::npos) << svg;
    // A regression of another cell marks nothing here.
    history.regressions[0].cell_key = "key2";
    svg = report::trend_svg(history, 0);
    EXPECT_EQ(count(svg, "class=\"found\""), 0u);
}

TEST(ReportHistory, ThePageLinksTheMailsRelativeToItsFolderAndEscapesText) {
    auto page = report::history_html(five_heads(), "/srv/rig/dashboard");
    ASSERT_TRUE(page) << page.error().message;
    EXPECT_NE(page->find("<a href=\"../outbox/abcabcabcabc-key1.mbox\">abcabcabcabc-key1.mbox</a>"),
              std::string::npos)
        << *page;
    EXPECT_NE(page->find("9p: &lt;always&gt; ask"), std::string::npos);
    EXPECT_EQ(page->find("<always>"), std::string::npos);
    EXPECT_NE(page->find("<svg id=\"trend-0\""), std::string::npos);
    EXPECT_NE(page->find("<title>rig watch w:master</title>"), std::string::npos);
    EXPECT_EQ(page->find("<script"), std::string::npos);
}
