// The HTML report writer: every text from the inputs is escaped, a missing part is a
// sentence saying how to get it, long step logs are bucketed (min/mean/max) so the page
// size does not grow with the run, event files merge in name order, and an unwritable
// path is a DataError. The page in a real browser: tests/e2e/html_report_browser.cpp.
#include "nnfit/profile/html_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>

#include "nnfit/core/error.h"
#include "nnfit/profile/event_file_writer.h"
#include "profile/step_buckets.h"
#include "profile/svg_chart.h"

namespace nnfit::profile {
namespace {

namespace fs = std::filesystem;

StepRecord step(std::int64_t n, std::int64_t wait, std::int64_t fwd, std::int64_t memory) {
  return {n, wait, 0, fwd, 2 * fwd, 0, 10, 1, memory};
}

ReportVerdict verdict() {
  ReportVerdict v;
  v.verdict = "input-bound";
  v.evidence = {"waited <b>90%</b> & more", "change: use \"AUTOTUNE\""};
  v.steps = 10;
  v.steps_used = 9;
  v.mean_step_us = 1000;
  v.breakdown = {{"input_wait", 900, 0.9}, {"forward", 100, 0.1}};
  v.heaviest_ops = {{"dense/<matmul>", "matmul", "forward", 50, 0.5, 12.5, 0.25}, {"adam's", "adam_update", "update", 5, 0.05, {}, {}}};
  v.peak_gflops_per_s = 50;
  v.peak_source = "given with --peak-gflops";
  v.pipeline_stages = {{"source: <idx>", 0.1, 10, 6}, {"map(a&b)", 2.0, 200, 6}};
  v.slowest_stage = "map(a&b)";
  return v;
}

ReportInputs full_inputs(std::size_t steps) {
  ReportInputs in;
  in.log_dir = "/tmp/logs";
  in.train_events_found = in.validation_events_found = in.steps_found = true;
  for (std::int64_t e = 0; e < 3; ++e) {
    in.train_scalars.push_back({"epoch_loss", e, 0, 1.0f / static_cast<float>(e + 1)});
    in.train_scalars.push_back({"epoch_accuracy", e, 0, 0.5f + 0.1f * static_cast<float>(e)});
    in.train_scalars.push_back({"epoch_memory_peak_bytes", e, 0, 3e6f});
    in.train_scalars.push_back({"epoch_samples_per_s", e, 0, 1000});
    in.validation_scalars.push_back({"epoch_loss", e, 0, 1.2f / static_cast<float>(e + 1)});
    in.validation_scalars.push_back({"epoch_accuracy", e, 0, 0.4f + 0.1f * static_cast<float>(e)});
  }
  for (std::size_t i = 1; i <= steps; ++i) {
    in.steps.push_back(step(static_cast<std::int64_t>(i), static_cast<std::int64_t>(i % 7), 100 + static_cast<std::int64_t>(i % 13),
                            2'000'000 + static_cast<std::int64_t>(i % 5) * 1000));
  }
  in.verdict = verdict();
  return in;
}

// data-points of the series named `series` in chart `chart`, or -1.
int points(const std::string& html, const std::string& chart, const std::string& series) {
  const std::size_t at = html.find("data-chart=\"" + chart + "\"");
  if (at == std::string::npos) return -1;
  const std::size_t end = html.find("</svg>", at);
  const std::regex re("data-series=\"" + series + "\" data-points=\"([0-9]+)\"");
  std::smatch m;
  const std::string svg = html.substr(at, end - at);
  if (!std::regex_search(svg, m, re)) return -1;
  return std::stoi(m[1]);
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlReport, EscapesHtmlSpecialCharacters) {
  EXPECT_EQ(svg::escape(R"(<a href="x">Tom & Jerry's</a>)"), "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  EXPECT_EQ(svg::escape("plain"), "plain");
}

TEST(HtmlReport, EveryTextFromTheInputsIsEscaped) {
  ReportInputs in = full_inputs(10);
  in.log_dir = "/tmp/<script>alert(1)</script>&\"dir\"";
  in.train_scalars.push_back({"epoch_<img src=x onerror=alert(1)>", 0, 0, 1});
  const std::string html = render_html_report(in, {.max_buckets = 600, .generator = "nnfit <x>", .generated_at = "now & then"});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("<matmul>"), std::string::npos);
  EXPECT_EQ(html.find("<idx>"), std::string::npos);
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;dir&quot;"), std::string::npos);
  EXPECT_NE(html.find("waited &lt;b&gt;90%&lt;/b&gt; &amp; more"), std::string::npos);
  EXPECT_NE(html.find("dense/&lt;matmul&gt;"), std::string::npos);
  EXPECT_NE(html.find("adam&#39;s"), std::string::npos);
  EXPECT_NE(html.find("map(a&amp;b)"), std::string::npos);
  EXPECT_NE(html.find("now &amp; then"), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"curve-&lt;img src=x onerror=alert(1)&gt;\""), std::string::npos);
  // Self-contained: nothing is fetched.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(HtmlReport, FullInputsDrawEveryChartWithItsSeries) {
  const std::string html = render_html_report(full_inputs(10));
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 4u);  // loss, accuracy, step time, memory
  EXPECT_EQ(points(html, "curve-loss", "train loss"), 3);
  EXPECT_EQ(points(html, "curve-loss", "validation loss"), 3);
  EXPECT_EQ(points(html, "curve-accuracy", "validation accuracy"), 3);
  EXPECT_EQ(html.find("curve-samples_per_s"), std::string::npos);  // a run figure: in the table, not a curve
  for (const char* part : {"input_wait", "h2d", "forward", "backward", "allreduce", "update", "callbacks"}) {
    EXPECT_EQ(points(html, "step-time", part), 10) << part;
  }
  EXPECT_EQ(points(html, "step-time", "fastest to slowest step in bucket"), -1);  // one step per point: no range
  EXPECT_EQ(points(html, "memory", "in use after the step"), 10);
  EXPECT_EQ(points(html, "memory", "peak during the epoch \\(epoch_memory_peak_bytes\\)"), -1);  // 10 steps are not 3 epochs
  EXPECT_NE(html.find("do not split into 3 epochs"), std::string::npos);
  EXPECT_NE(html.find("Verdict: <strong>input-bound</strong>"), std::string::npos);
  EXPECT_NE(html.find("<strong>slowest</strong>"), std::string::npos);

  const std::string nine = render_html_report(full_inputs(9));  // 3 epochs of 3 steps
  EXPECT_EQ(points(nine, "memory", "peak during the epoch \\(epoch_memory_peak_bytes\\)"), 3);
  EXPECT_EQ(nine.find("class=\"missing\""), std::string::npos) << "nothing is missing";
}

// The heaviest-ops table: FLOP/s and bytes columns, a dash where ops.json has no figure.
TEST(HtmlReport, HeaviestOpsShowTheirRatesAgainstPeakAndBandwidth) {
  ReportInputs in = full_inputs(10);
  ReportVerdict& v = *in.verdict;
  v.heaviest_ops = {{"dense/kernel/adam", "adam_update", "update", 228.3, 0.35, {}, {}, 2809856, 12.3, 0.612},
                    {"dense/matmul", "matmul", "forward", 50, 0.5, 12.5, 0.25, {}, {}, {}}};
  v.peak_gbps = 20.1;
  v.peak_gbps_source = "measured now: STREAM <triad>";
  const std::string html = render_html_report(in);
  const std::size_t table = html.find("<table class=\"ops\">");
  ASSERT_NE(table, std::string::npos);
  const std::string ops = html.substr(table, html.find("</table>", table) - table);
  EXPECT_NE(ops.find("<th>MB/step</th><th>GB/s</th><th>of bandwidth</th></tr>"), std::string::npos) << ops;
  EXPECT_NE(ops.find("<td>–</td><td>–</td><td>2.810</td><td>12.3</td><td>61.2%</td></tr>"), std::string::npos) << ops;
  EXPECT_NE(ops.find("<td>12.5</td><td>25.0%</td><td>–</td><td>–</td><td>–</td></tr>"), std::string::npos) << ops;
  EXPECT_NE(html.find("Memory bandwidth 20.1 GB/s (measured now: STREAM &lt;triad&gt;)."), std::string::npos);
  v.peak_gbps.reset();  // an old ops.json: no bandwidth to name
  EXPECT_EQ(render_html_report(in).find("Memory bandwidth"), std::string::npos);
}

TEST(HtmlReport, MissingPartsAreSentencesThatSayHowToGetThem) {
  ReportInputs none;
  none.log_dir = "/tmp/empty";
  std::string html = render_html_report(none);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("No TensorBoard event files in /tmp/empty/train"), std::string::npos);
  EXPECT_NE(html.find("No steps.jsonl in /tmp/empty"), std::string::npos);
  EXPECT_NE(html.find("No verdict"), std::string::npos);
  EXPECT_NE(html.find("<code>nnfit train CONFIG --logdir /tmp/empty</code>"), std::string::npos);
  EXPECT_EQ(html.find('`'), std::string::npos);
  EXPECT_GE(count(html, "class=\"missing\""), 4u);

  ReportInputs no_validation = full_inputs(9);
  no_validation.validation_events_found = false;
  no_validation.validation_scalars.clear();
  no_validation.steps_found = true;
  no_validation.steps.clear();
  no_validation.verdict.reset();
  no_validation.train_scalars.erase(
      std::remove_if(no_validation.train_scalars.begin(), no_validation.train_scalars.end(),
                     [](const ScalarEvent& e) { return e.tag == "epoch_memory_peak_bytes"; }),
      no_validation.train_scalars.end());
  html = render_html_report(no_validation);
  EXPECT_NE(html.find("No validation run"), std::string::npos);
  EXPECT_NE(html.find("data.validation"), std::string::npos);
  EXPECT_EQ(points(html, "curve-loss", "train loss"), 3);
  EXPECT_EQ(points(html, "curve-loss", "validation loss"), -1);
  EXPECT_NE(html.find("steps.jsonl in /tmp/logs has no steps yet"), std::string::npos);
  EXPECT_EQ(html.find("data-chart=\"step-time\""), std::string::npos);

  ReportInputs no_peaks = full_inputs(9);
  no_peaks.train_scalars.erase(std::remove_if(no_peaks.train_scalars.begin(), no_peaks.train_scalars.end(),
                                              [](const ScalarEvent& e) { return e.tag == "epoch_memory_peak_bytes"; }),
                               no_peaks.train_scalars.end());
  EXPECT_NE(render_html_report(no_peaks).find("No epoch_memory_peak_bytes in the train event files"), std::string::npos);
}

TEST(StepBuckets, EqualConsecutiveBucketsWithMinMeanMax) {
  std::vector<StepRecord> steps;
  for (int i = 1; i <= 10; ++i) steps.push_back(step(i, i, 0, 100 * i));  // total = i + 10 + 1
  const std::vector<StepBucket> b = bucket_steps(steps, 3);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].count, 4u);  // 10 = 4 + 3 + 3
  EXPECT_EQ(b[1].count, 3u);
  EXPECT_EQ(b[0].first_step, 1);
  EXPECT_EQ(b[0].last_step, 4);
  EXPECT_EQ(b[2].first_step, 8);
  EXPECT_EQ(b[2].last_step, 10);
  EXPECT_DOUBLE_EQ(b[0].mean_part_us[0], 2.5);  // input wait 1..4
  EXPECT_DOUBLE_EQ(b[0].mean_part_us[5], 10);   // update
  EXPECT_DOUBLE_EQ(b[0].total_us.min, 12);
  EXPECT_DOUBLE_EQ(b[0].total_us.mean, 13.5);
  EXPECT_DOUBLE_EQ(b[0].total_us.max, 15);
  EXPECT_DOUBLE_EQ(b[2].memory_in_use_bytes.min, 800);
  EXPECT_DOUBLE_EQ(b[2].memory_in_use_bytes.mean, 900);
  EXPECT_DOUBLE_EQ(b[2].memory_in_use_bytes.max, 1000);
  // Fewer steps than buckets: one bucket per step, exact.
  const std::vector<StepBucket> one = bucket_steps(steps, 600);
  ASSERT_EQ(one.size(), 10u);
  EXPECT_EQ(one[6].first_step, 7);
  EXPECT_DOUBLE_EQ(one[6].total_us.min, one[6].total_us.max);
  EXPECT_TRUE(bucket_steps({}, 5).empty());
  EXPECT_THROW(bucket_steps(steps, 0), InvalidArgument);
}

TEST(HtmlReport, AHundredThousandStepsMakeAPageOfBoundedSize) {
  const std::string small = render_html_report(full_inputs(600));
  const std::string large = render_html_report(full_inputs(100'000));
  EXPECT_EQ(points(large, "step-time", "forward"), 600);
  EXPECT_EQ(points(large, "step-time", "fastest to slowest step in bucket"), 600);
  EXPECT_EQ(points(large, "memory", "min–max in bucket"), 600);
  EXPECT_NE(large.find("100000 steps in 600 buckets"), std::string::npos);
  EXPECT_LT(large.size(), 250'000u);
  EXPECT_LT(large.size(), small.size() * 3 / 2);  // the two min-max bands are the only growth
  const std::string fewer = render_html_report(full_inputs(100'000), {.max_buckets = 50});
  EXPECT_EQ(points(fewer, "step-time", "forward"), 50);
  EXPECT_LT(fewer.size(), large.size() / 3);
}

TEST(HtmlReport, ADivergedEpochIsLeftOffTheCurveButKeptInTheTable) {
  ReportInputs in = full_inputs(9);
  in.train_scalars.push_back({"epoch_loss", 3, 0, std::numeric_limits<float>::infinity()});
  in.train_scalars.push_back({"batch_loss", 40, 0, 0.5f});  // per batch: neither a curve nor a table row
  const std::string html = render_html_report(in);
  EXPECT_EQ(points(html, "curve-loss", "train loss"), 3);
  EXPECT_EQ(html.find("NaN"), std::string::npos);
  EXPECT_NE(html.find("<td>inf</td>"), std::string::npos);
  EXPECT_EQ(html.find("batch_loss"), std::string::npos);
  EXPECT_EQ(html.find("<td>41</td>"), std::string::npos);
}

TEST(HtmlReport, OneSlowWarmUpStepDoesNotFlattenTheStepChart) {
  ReportInputs in = full_inputs(9);
  in.steps[0].input_wait_us = 700'000;
  const std::string html = render_html_report(in);
  EXPECT_NE(html.find("Above the scale: 1 step, the highest 700.314 ms (step 1)"), std::string::npos) << html;
  EXPECT_EQ(render_html_report(full_inputs(9)).find("Above the scale"), std::string::npos);
}

TEST(SvgChart, NiceTicksAndNumbers) {
  const std::vector<double> ticks = svg::nice_ticks(0, 0.93, 5);
  ASSERT_EQ(ticks.size(), 6u);
  for (std::size_t i = 0; i < ticks.size(); ++i) EXPECT_NEAR(ticks[i], 0.2 * static_cast<double>(i), 1e-12);
  EXPECT_EQ(svg::nice_ticks(1, 3, 8, /*integer=*/true), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(svg::nice_ticks(0, 100000, 5), (std::vector<double>{0, 20000, 40000, 60000, 80000, 100000}));
  EXPECT_EQ(svg::format_number(0.25), "0.25");
  EXPECT_EQ(svg::format_number(20000), "20k");
  EXPECT_EQ(svg::format_number(2.5e6), "2.5M");
  EXPECT_EQ(svg::format_number(12), "12");
}

class HtmlReportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nnfit_html_report_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(HtmlReportFiles, EventFilesMergeInNameOrderTheLaterValueWinning) {
  {
    EventFileWriter first((dir_ / "train").string());
    first.add_scalar("epoch_loss", 0.9, 0);
    first.add_scalar("epoch_loss", 0.8, 1);
    first.close();
    EventFileWriter second((dir_ / "train").string());  // a later fit: a file whose name sorts after
    second.add_scalar("epoch_loss", 0.5, 1);
    second.add_scalar("epoch_loss", 0.4, 2);
    second.close();
  }
  std::ofstream(dir_ / "train" / "notes.txt") << "not an event file";
  const ReportInputs in = load_report_events(dir_.string());
  EXPECT_TRUE(in.train_events_found);
  EXPECT_FALSE(in.validation_events_found);
  ASSERT_EQ(in.train_scalars.size(), 3u);
  EXPECT_FLOAT_EQ(in.train_scalars[0].value, 0.9f);
  EXPECT_FLOAT_EQ(in.train_scalars[1].value, 0.5f);
  EXPECT_FLOAT_EQ(in.train_scalars[2].value, 0.4f);
  EXPECT_FALSE(load_report_events((dir_ / "nothing").string()).train_events_found);
}

TEST_F(HtmlReportFiles, WritesAtomicallyAndNamesAnUnwritablePath) {
  const fs::path page = dir_ / "report.html";
  write_html_report(page.string(), "<p>one</p>");
  write_html_report(page.string(), "<p>two</p>");
  std::ifstream in(page);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "<p>two</p>");
  EXPECT_FALSE(fs::exists(dir_ / "report.html.tmp"));
  try {
    write_html_report((dir_ / "no" / "such" / "dir.html").string(), "x");
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write the report"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dir.html"), std::string::npos) << e.what();
  }
  fs::create_directories(dir_ / "a_directory");
  EXPECT_THROW(write_html_report((dir_ / "a_directory").string(), "x"), DataError);
}

}  // namespace
}  // namespace nnfit::profile
