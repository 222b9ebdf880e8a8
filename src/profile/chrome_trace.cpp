// Chrome Trace Event JSON, written by hand (names are static strings, thread names are
// escaped) and gzipped with zlib. Timestamps are relative to the session's start so that a
// double in µs keeps nanosecond precision (%.3f) and nesting survives rounding.
#include "nnfit/profile/chrome_trace.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>

#include "nnfit/core/error.h"
#include "profile/host_info.h"

namespace nnfit::profile {
namespace {

constexpr std::size_t kGzChunkBytes = std::size_t{1} << 20;  // gzwrite takes an unsigned count

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
}

// ns -> µs with three decimals, exact for any int64.
void append_us(std::string& out, std::int64_t ns) {
  char buf[40];
  const char* sign = ns < 0 ? "-" : "";
  const std::uint64_t a = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, sign, a / 1000, a % 1000);
  out += buf;
}

}  // namespace

std::string chrome_trace_json(const trace::Collected& trace, const ChromeTraceOptions& options) {
  const std::int64_t pid = options.pid != 0 ? options.pid : static_cast<std::int64_t>(::getpid());
  const std::string pid_s = std::to_string(pid);
  std::int64_t origin = trace.session_begin_ns;
  for (const trace::Event& e : trace.events) origin = std::min(origin, e.begin_ns);

  std::string out;
  out.reserve(256 + trace.events.size() * 120);
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out += "{\"ph\":\"M\",\"pid\":" + pid_s + ",\"name\":\"process_name\",\"args\":{\"name\":";
  append_json_string(out, options.process_name);
  out += "}}";
  std::map<std::int64_t, const std::string*> threads;
  for (const trace::Event& e : trace.events) threads.emplace(e.thread_id, &e.thread_name);
  for (const auto& [tid, name] : threads) {
    const std::string tid_s = std::to_string(tid);
    out += ",\n{\"ph\":\"M\",\"pid\":" + pid_s + ",\"tid\":" + tid_s + ",\"name\":\"thread_name\",\"args\":{\"name\":";
    append_json_string(out, *name);
    out += "}},\n{\"ph\":\"M\",\"pid\":" + pid_s + ",\"tid\":" + tid_s +
           ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + tid_s + "}}";
  }
  for (const trace::Event& e : trace.events) {
    out += ",\n{\"ph\":\"X\",\"pid\":" + pid_s + ",\"tid\":" + std::to_string(e.thread_id) + ",\"name\":";
    append_json_string(out, e.name);
    if (e.category[0] != '\0') {
      out += ",\"cat\":";
      append_json_string(out, e.category);
    }
    out += ",\"ts\":";
    append_us(out, e.begin_ns - origin);
    out += ",\"dur\":";
    append_us(out, e.end_ns - e.begin_ns);
    out += ",\"args\":{\"arg\":" + std::to_string(e.arg) + "}}";
  }
  out += "\n],\"otherData\":{\"producer\":\"nnfit\",\"dropped_events\":" + std::to_string(trace.dropped_events) +
         ",\"open_events\":" + std::to_string(trace.open_events) + "}}\n";
  return out;
}

std::string write_chrome_trace(const trace::Collected& trace, const std::string& log_dir, const std::string& run,
                               const ChromeTraceOptions& options) {
  namespace fs = std::filesystem;
  const fs::path profile_dir = fs::path(log_dir) / run / "plugins" / "profile";
  const std::string stamp = session_timestamp();
  fs::path session = profile_dir / stamp;
  for (int n = 1; fs::exists(session); ++n) session = profile_dir / (stamp + "_" + std::to_string(n));
  std::error_code ec;
  fs::create_directories(session, ec);
  if (ec) throw DataError(session.string(), -1, "cannot create the profile directory: " + ec.message(),
                          "check that the log directory is writable");
  const fs::path path = session / (host_name() + ".trace.json.gz");
  const fs::path tmp = session / (host_name() + ".trace.json.gz.tmp");

  const std::string json = chrome_trace_json(trace, options);
  gzFile f = gzopen(tmp.c_str(), "wb6");
  if (f == nullptr) throw DataError(tmp.string(), -1, "cannot create the trace file", "check that the log directory is writable");
  bool wrote = true;
  for (std::size_t at = 0; wrote && at < json.size(); at += kGzChunkBytes) {
    const auto n = static_cast<unsigned>(std::min(kGzChunkBytes, json.size() - at));
    wrote = gzwrite(f, json.data() + at, n) == static_cast<int>(n);
  }
  const bool closed = gzclose(f) == Z_OK;
  if (!wrote || !closed) {
    fs::remove(tmp, ec);
    throw DataError(tmp.string(), -1, "cannot write the trace file", "check free disk space");
  }
  fs::rename(tmp, path, ec);
  if (ec) throw DataError(path.string(), -1, "cannot rename the trace file into place: " + ec.message(), "");
  return path.string();
}

}  // namespace nnfit::profile
