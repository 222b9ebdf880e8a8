// `nnfit profile LOGDIR --html FILE` from the command line: the page is written beside the
// usual summary (text, or JSON with stdout left pure JSON), a log directory without a step
// log still gets a page saying what is missing, a 100k-step log gives a page of bounded
// size, and an unwritable path is one error line with exit code 1. The page rendered in a
// browser: html_report_browser.cpp.
#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "nnfit/profile/event_file_writer.h"
#include "nnfit/profile/step_log.h"

namespace {

using namespace nnfit_test;

class CliProfileHtmlTest : public CliTest {
 protected:
  // A hand-made log: `steps` steps and, when `events`, 2 epochs of train scalars.
  fs::path make_log(int steps, bool events) {
    const fs::path logs = dir_ / "logs";
    fs::create_directories(logs);
    std::string lines;
    for (int i = 1; i <= steps; ++i) {
      lines += nnfit::profile::step_json({i, 5 + i % 3, 0, 300 + i % 17, 500, 0, 60, 2, 1'000'000 + (i % 4) * 4096}) + "\n";
    }
    if (steps > 0) write_file(logs / "steps.jsonl", lines);
    if (events) {
      nnfit::profile::EventFileWriter w((logs / "train").string());
      w.add_scalar("epoch_loss", 0.9, 0);
      w.add_scalar("epoch_loss", 0.7, 1);
      w.close();
    }
    return logs;
  }
};

TEST_F(CliProfileHtmlTest, WritesThePageBesideTheTextOrJsonSummary) {
  const fs::path logs = make_log(20, true), page = dir_ / "report.html";
  Result r = run("profile " + logs.string() + " --peak-gflops 100 --html " + page.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("report written to " + page.string()), std::string::npos) << r.out;
  const std::string html = slurp(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("data-chart=\"curve-loss\""), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"step-time\""), std::string::npos);
  EXPECT_NE(html.find("data-chart=\"memory\""), std::string::npos);
  EXPECT_NE(html.find("No validation run"), std::string::npos);
  // The verdict on the page is the one the command printed.
  const std::size_t v = r.out.find("verdict: ");
  const std::string verdict = r.out.substr(v + 9, r.out.find('\n', v) - v - 9);
  EXPECT_NE(html.find("Verdict: <strong>" + verdict + "</strong>"), std::string::npos) << verdict;
  EXPECT_FALSE(fs::exists(dir_ / "report.html.tmp"));

  fs::remove(page);
  r = run("profile " + logs.string() + " --peak-gflops 100 --json --html " + page.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);  // stdout stays pure JSON
  EXPECT_NE(slurp(page).find("Verdict: <strong>" + j["verdict"].get<std::string>() + "</strong>"), std::string::npos);
}

TEST_F(CliProfileHtmlTest, WithoutAStepLogThePageSaysWhatIsMissing) {
  const fs::path logs = make_log(0, true), page = dir_ / "report.html";
  const Result r = run("profile " + logs.string() + " --html " + page.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("nnfit: note: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  const std::string html = slurp(page);
  EXPECT_NE(html.find("data-chart=\"curve-loss\""), std::string::npos);
  EXPECT_NE(html.find("No steps.jsonl in " + logs.string()), std::string::npos);
  EXPECT_NE(html.find("No verdict"), std::string::npos);
  EXPECT_EQ(html.find("data-chart=\"step-time\""), std::string::npos);
  // Without --html a missing step log is still the error it was.
  expect_error_of("profile " + logs.string(), 1, {"steps.jsonl", "no step log"});
}

TEST_F(CliProfileHtmlTest, AHundredThousandStepsGiveAPageOfBoundedSize) {
  const fs::path logs = make_log(100'000, true), page = dir_ / "report.html";
  const Result r = run("profile " + logs.string() + " --peak-gflops 100 --html " + page.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = slurp(page);
  EXPECT_NE(html.find("100000 steps in 600 buckets"), std::string::npos);
  EXPECT_NE(html.find("data-series=\"forward\" data-points=\"600\""), std::string::npos);
  EXPECT_LT(html.size(), 250'000u) << "a 100k-step page should stay small";
}

TEST_F(CliProfileHtmlTest, AnUnwritablePathIsOneErrorLineWithExitCode1) {
  const fs::path logs = make_log(10, false);
  expect_error_of("profile " + logs.string() + " --html " + (dir_ / "no" / "such" / "r.html").string(), 1,
                  {"r.html", "cannot write the report", "no directory"});
  fs::create_directories(dir_ / "a_dir");
  expect_error_of("profile " + logs.string() + " --html " + (dir_ / "a_dir").string(), 1,
                  {"a_dir", "cannot write the report", "is a directory"});
  // /proc refuses new files even to root.
  expect_error_of("profile " + logs.string() + " --peak-gflops 100 --html /proc/nnfit_report.html", 1,
                  {"/proc/nnfit_report.html", "cannot write the report"});
  expect_error_of("profile " + logs.string() + " --html", 2, {"--html"});
}

}  // namespace
