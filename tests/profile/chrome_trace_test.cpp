// Chrome trace export: the file lands in Keras's profile layout, gunzips to valid JSON in
// the Trace Event format (metadata and complete events with the fields viewers require), and
// every thread's ranges nest; names that need escaping stay valid JSON.
#include "nnfit/profile/chrome_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

namespace nnfit::profile {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string gunzip(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return {};
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return out;
}

void work(int depth) {
  TraceRange r(depth == 0 ? "leaf" : "level", "test", depth);
  if (depth > 0) {
    work(depth - 1);
    work(depth - 1);
  }
}

// Sorted as a viewer sorts (ts ascending, longer first), each thread's X events form a stack.
void expect_nested_per_thread(const json& events) {
  std::map<std::int64_t, std::vector<std::pair<double, double>>> by_tid;
  for (const json& e : events) {
    if (e["ph"] == "X") by_tid[e["tid"].get<std::int64_t>()].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
  }
  for (auto& [tid, spans] : by_tid) {
    std::stable_sort(spans.begin(), spans.end(), [](auto a, auto b) { return a.first < b.first || (a.first == b.first && a.second > b.second); });
    std::vector<double> open_ends;
    for (auto [ts, dur] : spans) {
      while (!open_ends.empty() && open_ends.back() <= ts) open_ends.pop_back();
      if (!open_ends.empty()) EXPECT_LE(ts + dur, open_ends.back() + 1e-9) << "tid " << tid << " span at " << ts;
      open_ends.push_back(ts + dur);
    }
  }
}

TEST(ChromeTrace, GzippedFileInKerasLayoutIsValidTraceEventJson) {
  trace::start();
  trace::set_thread_name("main \"loop\"\n");  // must be escaped
  std::thread worker([] {
    trace::set_thread_name("pipeline worker");
    work(4);
  });
  work(5);
  worker.join();
  trace::stop();
  const trace::Collected collected = trace::collect();
  ASSERT_EQ(collected.events.size(), 63u + 31u);

  const fs::path log_dir = fs::path(::testing::TempDir()) / ("nnfit_chrome_trace_" + std::to_string(::getpid()));
  fs::remove_all(log_dir);
  const std::string path = write_chrome_trace(collected, log_dir.string());
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const fs::path p(path);
  EXPECT_EQ(p.filename().string(), std::string(host) + ".trace.json.gz");
  EXPECT_TRUE(std::regex_match(p.parent_path().filename().string(), std::regex(R"(\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d)")))
      << p.parent_path();
  EXPECT_EQ(p.parent_path().parent_path(), log_dir / "train" / "plugins" / "profile");
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  const json doc = json::parse(gunzip(p));  // throws on invalid JSON
  ASSERT_TRUE(doc.is_object());
  ASSERT_TRUE(doc["traceEvents"].is_array());
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_EQ(doc["otherData"]["dropped_events"], 0);
  std::map<std::int64_t, std::string> thread_names;
  std::set<std::int64_t> x_tids;
  int complete = 0, process_names = 0;
  for (const json& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e.dump();
    EXPECT_EQ(e["pid"].get<std::int64_t>(), static_cast<std::int64_t>(::getpid()));
    if (e["ph"] == "M") {
      if (e["name"] == "process_name") ++process_names;
      if (e["name"] == "thread_name") thread_names[e["tid"].get<std::int64_t>()] = e["args"]["name"].get<std::string>();
      continue;
    }
    ASSERT_EQ(e["ph"], "X") << e.dump();
    ++complete;
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number() && e["tid"].is_number_integer()) << e.dump();
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    EXPECT_EQ(e["cat"], "test");
    EXPECT_TRUE(e["args"]["arg"].is_number_integer());
    x_tids.insert(e["tid"].get<std::int64_t>());
  }
  EXPECT_EQ(complete, 94);
  EXPECT_EQ(process_names, 1);
  EXPECT_EQ(x_tids.size(), 2u);
  for (std::int64_t tid : x_tids) EXPECT_TRUE(thread_names.count(tid)) << "no thread_name for tid " << tid;
  std::set<std::string> names;
  for (const auto& [tid, name] : thread_names) names.insert(name);
  EXPECT_TRUE(names.count("main \"loop\"\n"));
  EXPECT_TRUE(names.count("pipeline worker"));
  expect_nested_per_thread(doc["traceEvents"]);

  // A second export in the same second gets its own session directory.
  const std::string again = write_chrome_trace(collected, log_dir.string());
  EXPECT_NE(fs::path(again).parent_path(), p.parent_path());
}

TEST(ChromeTrace, TimestampsAreMicrosecondsWithNanosecondDigits) {
  trace::Collected c;
  c.session_begin_ns = 1'000'000'000;
  trace::Event e;
  e.thread_id = 3;
  e.thread_name = "t";
  e.name = "step";
  e.begin_ns = 1'000'001'234;
  e.end_ns = 1'000'003'235;
  c.events.push_back(e);
  const json doc = json::parse(chrome_trace_json(c, {.pid = 42, .process_name = "p"}));
  const json& x = doc["traceEvents"].back();
  EXPECT_EQ(x["ph"], "X");
  EXPECT_DOUBLE_EQ(x["ts"].get<double>(), 1.234);
  EXPECT_DOUBLE_EQ(x["dur"].get<double>(), 2.001);
  EXPECT_EQ(x["pid"], 42);
  EXPECT_EQ(x["tid"], 3);
  EXPECT_FALSE(x.contains("cat"));
  EXPECT_EQ(doc["traceEvents"][0]["args"]["name"], "p");
}

}  // namespace
}  // namespace nnfit::profile
