#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "loadgen/report.h"
#include "loadgen/report_format.h"
#include "loadgen/svg_chart.h"

namespace anteroom::loadgen {
namespace {

namespace json = boost::json;

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

double number(const json::value& v) { return v.to_number<double>(); }

// Two phases as protect would report them: "direct" without a queue, "queued" with one.
RunResult sample_run() {
  RunResult run;
  run.scenario = "protect";
  run.command = "anteroom-loadgen protect --room a<b&c --note \"x\" > out";
  run.machine = "2 cores, Linux 6.1, 24 GiB";
  run.started_at = "2024-05-01T12:00:00Z";
  run.processes = 2;
  run.source_addresses = 4;
  run.config = {{"rate", "200/s"}, {"duration", "30s"}};
  run.metrics = {{"memory per session", 6240, "bytes"}};
  run.checks = {{"seed visit", true, "joined, admitted, used, left"},
                {"no inversions", false, "3 inversions | see phase queued"}};

  Phase direct;
  direct.name = "direct";
  direct.duration_s = 2;
  direct.visits.planned = 100;
  direct.visits.failed = 7;
  direct.errors[static_cast<int>(ErrorKind::k5xx)] = 5;
  direct.errors[static_cast<int>(ErrorKind::kTimeout)] = 2;
  for (uint64_t i = 1; i <= 100; ++i)
    direct.latency[static_cast<int>(RequestKind::kOrigin)].record(i * 1000);
  direct.seconds.resize(2);
  direct.seconds[0].requests = 50;
  direct.seconds[1].requests = 50;
  direct.seconds[1].errors = 7;
  direct.seconds[0].latency.record(2000, 50);
  direct.seconds[1].latency.record(40000, 50);
  direct.max_open_sessions = 80;

  Phase queued;
  queued.name = "queued";
  queued.duration_s = 3;
  queued.visits = {1000, 990, 900, 880, 870, 10, 5, 3, 10};
  queued.max_open_sessions = 995;
  queued.truth = {3, 1, 2, 4};
  Histogram& join = queued.latency[static_cast<int>(RequestKind::kJoin)];
  for (uint64_t i = 0; i < 1000; ++i) join.record(500 + i * 10);  // 0.5 .. 10.49 ms
  queued.latency[static_cast<int>(RequestKind::kStatus)].record(3000, 4000);
  for (uint64_t i = 0; i < 900; ++i) queued.time_to_admission.record(100'000 + i * 2'000);
  queued.seconds.resize(3);
  for (size_t t = 0; t < 3; ++t) {
    SecondBucket& b = queued.seconds[t];
    b.requests = 1000 + t * 600;
    b.admitted = 300;
    b.waiting = 700 - t * 300;
    b.active = 300 * (t + 1);
    b.open_sessions = 990;
    if (t != 1) b.latency.record(3000 + t * 1000, b.requests);  // second 1: no answers
  }
  run.phases = {direct, queued};
  return run;
}

TEST(ReportJson, ParsesAndCarriesTheNumbers) {
  RunResult run = sample_run();
  json::value doc = json::parse(report_json(run));
  const json::object& o = doc.as_object();
  EXPECT_EQ(o.at("scenario").as_string(), "protect");
  EXPECT_EQ(o.at("command").as_string(), run.command);
  EXPECT_FALSE(o.at("passed").as_bool());
  EXPECT_EQ(o.at("processes").to_number<int>(), 2);
  EXPECT_EQ(o.at("source_addresses").to_number<int>(), 4);
  EXPECT_EQ(o.at("config").at("rate").as_string(), "200/s");
  EXPECT_EQ(o.at("metrics").at(0).at("unit").as_string(), "bytes");
  EXPECT_DOUBLE_EQ(number(o.at("metrics").at(0).at("value")), 6240);
  EXPECT_FALSE(o.at("checks").at(1).at("passed").as_bool());
  EXPECT_TRUE(o.at("checks").at(0).at("passed").as_bool());

  const json::array& phases = o.at("phases").as_array();
  ASSERT_EQ(phases.size(), 2u);
  const json::value& d = phases[0];
  EXPECT_EQ(d.at("name").as_string(), "direct");
  EXPECT_EQ(d.at("errors").at("5xx").to_number<uint64_t>(), 5u);
  EXPECT_EQ(d.at("errors").at("timeout").to_number<uint64_t>(), 2u);
  EXPECT_EQ(d.at("errors").at("connect").to_number<uint64_t>(), 0u);
  EXPECT_EQ(d.at("requests").to_number<uint64_t>(), 100u);
  EXPECT_NEAR(number(d.at("throughput_rps")), 50.0, 1e-9);
  EXPECT_NEAR(number(d.at("error_rate")), 7.0 / 107.0, 1e-9);
  EXPECT_NEAR(number(d.at("latency_us").at("origin").at("p50")), 50'000, 50'000 * 0.02);
  EXPECT_FALSE(d.at("latency_us").as_object().contains("join"));  // no joins in "direct"
  EXPECT_EQ(d.at("visits").at("failed").to_number<uint64_t>(), 7u);

  const json::value& q = phases[1];
  const Histogram& join = run.phases[1].latency[static_cast<int>(RequestKind::kJoin)];
  EXPECT_EQ(q.at("latency_us").at("join").at("p50").to_number<uint64_t>(), join.percentile(50));
  EXPECT_NEAR(number(q.at("latency_us").at("join").at("p50")), 5500, 5500 * 0.02);
  EXPECT_EQ(q.at("latency_us").at("join").at("count").to_number<uint64_t>(), 1000u);
  EXPECT_EQ(q.at("latency_us").at("join").at("max").to_number<uint64_t>(), 10'490u);
  EXPECT_EQ(q.at("latency_us").at("all").at("count").to_number<uint64_t>(), 5000u);
  EXPECT_EQ(q.at("latency_us").at("status").at("p99").to_number<uint64_t>(), 3000u);
  EXPECT_EQ(q.at("truth").at("inversions").to_number<uint64_t>(), 3u);
  EXPECT_EQ(q.at("truth").at("join_order_violations").to_number<uint64_t>(), 1u);
  EXPECT_EQ(q.at("truth").at("positions_grew").to_number<uint64_t>(), 2u);
  EXPECT_EQ(q.at("truth").at("unresolved").to_number<uint64_t>(), 4u);
  EXPECT_EQ(q.at("visits").at("abandoned").to_number<uint64_t>(), 10u);
  EXPECT_EQ(q.at("max_open_sessions").to_number<uint64_t>(), 995u);
  // 100 ms .. 1898 ms, in milliseconds with one decimal.
  const json::value& tta = q.at("time_to_admission_ms");
  EXPECT_EQ(tta.at("count").to_number<uint64_t>(), 900u);
  EXPECT_DOUBLE_EQ(number(tta.at("min")), 100.0);
  EXPECT_DOUBLE_EQ(number(tta.at("max")), 1898.0);
  EXPECT_NEAR(number(tta.at("p50")), 999.0, 999 * 0.02);
  const json::array& seconds = q.at("seconds").as_array();
  ASSERT_EQ(seconds.size(), 3u);
  EXPECT_EQ(seconds[2].at("t").to_number<int>(), 2);
  EXPECT_EQ(seconds[2].at("requests").to_number<uint64_t>(), 2200u);
  EXPECT_EQ(seconds[2].at("active").to_number<uint64_t>(), 900u);
  EXPECT_EQ(seconds[1].at("p99_us").to_number<uint64_t>(), 0u);
  EXPECT_EQ(seconds[0].at("p50_us").to_number<uint64_t>(), 3000u);
}

TEST(ReportMarkdown, VerdictTablesAndEscaping) {
  std::string md = report_markdown(sample_run());
  EXPECT_EQ(md.rfind("# anteroom-loadgen: protect\n", 0), 0u);
  EXPECT_NE(md.find("Verdict: FAIL"), std::string::npos);
  EXPECT_NE(md.find("(1 of 2 checks failed)"), std::string::npos);
  EXPECT_NE(md.find("| check | result | detail |"), std::string::npos);
  EXPECT_NE(md.find("3 inversions \\| see phase queued"), std::string::npos);
  EXPECT_NE(md.find("```\n" + sample_run().command + "\n```"), std::string::npos);
  EXPECT_NE(md.find("## Phase: direct (2.0 s)"), std::string::npos);
  EXPECT_NE(md.find("## Phase: queued (3.0 s)"), std::string::npos);
  EXPECT_NE(md.find("| latency (ms) | count | p50 | p90 | p99 | p99.9 | max |"), std::string::npos);
  EXPECT_NE(md.find("| status | 4000 | 3.00 | 3.00 | 3.00 | 3.00 | 3.00 |"), std::string::npos);
  EXPECT_NE(md.find("Errors: timeout 2, 5xx 5"), std::string::npos);
  EXPECT_NE(md.find("inversions 3, join-order violations 1"), std::string::npos);
  EXPECT_NE(md.find("| memory per session | 6240 | bytes |"), std::string::npos);
}

TEST(ReportHtml, SelfContainedWithChartsAndEscapedText) {
  std::string html = report_html(sample_run());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_GE(count_of(html, "<svg"), 8u);  // four charts for each of two phases
  EXPECT_EQ(count_of(html, "<svg"), count_of(html, "</svg>"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_NE(html.find("a&lt;b&amp;c --note &quot;x&quot; &gt; out"), std::string::npos);
  EXPECT_EQ(html.find("a<b&c"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"fail\">FAIL</span>"), std::string::npos);
  EXPECT_NE(html.find("3 inversions | see phase queued"), std::string::npos);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_NE(html.find("Time to admission"), std::string::npos);
  // The direct phase admits nobody, so its admission chart has nothing to draw.
  EXPECT_EQ(count_of(html, ">no data<"), 1u);
  EXPECT_GE(count_of(html, "<rect x="), 8u + 20u);  // 8 chart frames, 20+ admission bars
}

TEST(ReportHtml, EmptyRunRenders) {
  RunResult run;
  std::string html = report_html(run);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("(no checks)"), std::string::npos);
  EXPECT_NE(report_markdown(run).find("Verdict: PASS"), std::string::npos);
  json::value doc = json::parse(report_json(run));
  EXPECT_TRUE(doc.at("passed").as_bool());
  EXPECT_TRUE(doc.at("phases").as_array().empty());

  // A phase with no requests, seconds or admissions: every chart says "no data".
  run.phases.emplace_back();
  html = report_html(run);
  EXPECT_EQ(count_of(html, ">no data<"), 4u);
  doc = json::parse(report_json(run));
  EXPECT_EQ(doc.at("phases").at(0).at("latency_us").at("all").at("count").to_number<int>(), 0);
  EXPECT_DOUBLE_EQ(number(doc.at("phases").at(0).at("throughput_rps")), 0.0);
  EXPECT_NE(report_markdown(run).find("No requests answered."), std::string::npos);
}

TEST(SvgChart, TicksAndLabels) {
  std::vector<double> t = nice_ticks(0, 97, 5);
  ASSERT_GE(t.size(), 2u);
  EXPECT_EQ(t.front(), 0);
  EXPECT_GE(t.back(), 97);
  EXPECT_EQ(t[1] - t[0], 20);
  t = nice_ticks(0, 0.7, 5);
  EXPECT_DOUBLE_EQ(t[1], 0.1);
  EXPECT_EQ(tick_label(t[3], t[1] - t[0]), "0.3");
  EXPECT_EQ(tick_label(0.2, 0.2), "0.2");
  EXPECT_EQ(tick_label(0.05, 0.05), "0.05");
  EXPECT_EQ(tick_label(40, 20), "40");
  EXPECT_EQ(tick_label(15000, 5000), "15k");
  EXPECT_EQ(tick_label(2e6, 1e6), "2M");
  EXPECT_EQ(tick_label(0, 1e6), "0");
  EXPECT_EQ(xml_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");

  std::string svg = line_chart("t<1>", "x", "y", {{"a&b", "#000", {1, 2, NAN, 4}}});
  EXPECT_NE(svg.find("t&lt;1&gt;"), std::string::npos);
  EXPECT_NE(svg.find("a&amp;b"), std::string::npos);
  EXPECT_EQ(count_of(svg, "<polyline"), 1u);  // 1-2, then the gap
  EXPECT_EQ(count_of(svg, "<circle"), 1u);    // 4 alone
  EXPECT_NE(line_chart("t", "x", "y", {}).find("no data"), std::string::npos);
  EXPECT_NE(bar_chart("t", "x", "y", 0, 1, {}).find("no data"), std::string::npos);
  EXPECT_EQ(count_of(bar_chart("t", "x", "y", 0, 1, {1, 0, 3}), "<rect x="), 3u);  // frame + 2
}

TEST(WriteReports, WritesThreeFilesAndCreatesTheDirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / "anteroom_report_test";
  fs::remove_all(dir);
  std::string prefix = (dir / "sub" / "run1").string();
  ASSERT_EQ(write_reports(sample_run(), prefix), "");
  for (const char* ext : {".json", ".md", ".html"}) {
    fs::path p = prefix + ext;
    ASSERT_TRUE(fs::exists(p)) << p;
    EXPECT_GT(fs::file_size(p), 100u) << p;
    EXPECT_FALSE(fs::exists(prefix + ext + ".tmp")) << p;
  }
  std::ifstream in(prefix + ".json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(json::parse(text.str()).at("scenario").as_string(), "protect");

  // A prefix under a regular file cannot be created, and says so.
  std::ofstream(dir / "file") << "x";
  EXPECT_NE(write_reports(sample_run(), (dir / "file" / "run").string()), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace anteroom::loadgen

namespace anteroom::loadgen {
namespace {

TEST(ReportFormat, NumbersReadTheSameInEveryReport) {
  EXPECT_EQ(ms(431), "0.431");
  EXPECT_EQ(ms(4310), "4.31");
  EXPECT_EQ(ms(43100), "43.1");
  EXPECT_EQ(secs(250000), "0.250");
  EXPECT_EQ(secs(22937600), "22.94");
  EXPECT_EQ(metric_value(10.6824), "10.7");
  EXPECT_EQ(metric_value(0.43125), "0.431");
  EXPECT_EQ(metric_value(7511.85), "7512");
  EXPECT_EQ(metric_value(19000), "19000");
  EXPECT_EQ(metric_value(-2.5), "-2.50");
}

}  // namespace
}  // namespace anteroom::loadgen
