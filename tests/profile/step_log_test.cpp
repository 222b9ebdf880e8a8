// steps.jsonl: lines round-trip through the writer and the reader with exactly the keys
// of docs/cli.md; a truncated or garbled line is a DataError naming the file and the
// line; step ranges parse "10-20" and "15" and reject the rest.
#include "nnfit/profile/step_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nnfit/core/error.h"

namespace nnfit::profile {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& contents) {
  char tmpl[] = "/tmp/nnfit_step_log_XXXXXX";
  const int fd = mkstemp(tmpl);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(tmpl, std::ios::binary) << contents;
  return tmpl;
}

TEST(StepLog, JsonHasExactlyTheDocumentedKeysInOrder) {
  StepRecord r{7, 10, 0, 200, 300, 0, 40, 5, 123456};
  EXPECT_EQ(step_json(r),
            R"({"step":7,"input_wait_us":10,"h2d_us":0,"forward_us":200,"backward_us":300,"allreduce_us":0,)"
            R"("update_us":40,"callbacks_us":5,"memory_in_use_bytes":123456})");
  EXPECT_EQ(r.total_us(), 555);
}

TEST(StepLog, WriterBuffersUntilFlushAndReaderReadsItBack) {
  const fs::path p = temp_file("");
  {
    StepLogWriter w(p.string(), /*append=*/false);
    w.add({1, 1, 0, 2, 3, 0, 4, 0, 99});
    EXPECT_EQ(fs::file_size(p), 0u);  // buffered
    w.flush();
    EXPECT_GT(fs::file_size(p), 0u);
    w.add({2, 5, 0, 6, 7, 0, 8, 1, 100});
  }  // the destructor flushes
  {
    StepLogWriter w(p.string(), /*append=*/true);
    w.add({3, 0, 0, 0, 0, 0, 0, 0, 0});
  }
  std::vector<StepRecord> steps = read_step_log(p.string());
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[1].step, 2);
  EXPECT_EQ(steps[1].backward_us, 7);
  EXPECT_EQ(steps[1].memory_in_use_bytes, 100);
  EXPECT_EQ(steps[2].step, 3);
  fs::remove(p);
}

void expect_bad(const std::string& contents, const std::string& fragment) {
  const fs::path p = temp_file(contents);
  try {
    read_step_log(p.string());
    ADD_FAILURE() << "no error for: " << contents;
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
  fs::remove(p);
}

TEST(StepLog, BadLinesNameTheFileAndTheLine) {
  const std::string good = step_json({1, 1, 0, 1, 1, 0, 1, 0, 1}) + "\n";
  const std::string full = step_json({2, 1, 0, 1, 1, 0, 1, 0, 1});
  expect_bad(good + full.substr(0, full.size() / 2), "line 2: the line ends");  // truncated by a crash
  expect_bad(good + good + "garbage\n", "line 3: expected '{'");
  expect_bad(R"({"step":1,"input_wait_us":-4})", R"(line 1: the value of "input_wait_us" is not a non-negative integer)");
  expect_bad(R"({"step":1,"stepz":2})", R"(line 1: unknown key "stepz")");
  expect_bad(R"({"step":1,"step":2})", "appears twice");
  expect_bad(R"({"step":1,"input_wait_us":1,"h2d_us":0,"forward_us":1,"backward_us":1,"allreduce_us":0,"update_us":1,"callbacks_us":0})",
             R"(missing key "memory_in_use_bytes")");
  expect_bad(good + "{}\n", "line 2: an empty object");
  expect_bad(good.substr(0, good.size() - 1) + " x\n", "unexpected text after the object");
  // Blank lines are skipped; an empty file has no steps.
  const fs::path p = temp_file("\n" + good + "\n");
  EXPECT_EQ(read_step_log(p.string()).size(), 1u);
  fs::remove(p);
}

TEST(StepLog, MissingFileIsADataError) {
  EXPECT_THROW(read_step_log("/nonexistent/steps.jsonl"), DataError);
}

TEST(StepRange, ParsesRangesAndSingleSteps) {
  StepRange r = parse_step_range("10-20");
  EXPECT_EQ(r.first, 10);
  EXPECT_EQ(r.last, 20);
  EXPECT_TRUE(r.contains(10) && r.contains(20) && !r.contains(21) && !r.contains(9));
  r = parse_step_range("15");
  EXPECT_EQ(r.first, 15);
  EXPECT_EQ(r.last, 15);
  for (const char* bad : {"", "-", "10-", "-20", "0-5", "20-10", "a-b", "10 - 20", "1-2-3", "10..20", "+3"}) {
    EXPECT_THROW(parse_step_range(bad), InvalidArgument) << bad;
  }
  try {
    parse_step_range("20-10");
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("expected FIRST-LAST"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nnfit::profile
