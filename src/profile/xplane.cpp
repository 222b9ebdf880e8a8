// XSpace encoding by hand (proto_wire.h). Field numbers from TensorFlow's xplane.proto
// (tsl/profiler/protobuf/xplane.proto, package tensorflow.profiler), also in
// ../shared/formats/tensorboard.md section 8:
//   XSpace{planes=1, errors=2, warnings=3, hostnames=4}
//   XPlane{id=1, name=2, lines=3, event_metadata=4 (map<int64, XEventMetadata>),
//          stat_metadata=5 (map<int64, XStatMetadata>), stats=6}
//   XLine{id=1, name=2, timestamp_ns=3, events=4, duration_ps=9, display_id=10, display_name=11}
//   XEvent{metadata_id=1, offset_ps=2 (oneof with num_occurrences=5), duration_ps=3, stats=4}
//   XStat{metadata_id=1, double_value=2, uint64_value=3, int64_value=4, str_value=5, ...}
//   XEventMetadata{id=1, name=2, metadata=3, display_name=4, stats=5, child_id=6}
//   XStatMetadata{id=1, name=2, description=3}
// A map<int64, M> field is a repeated message {key = 1, value = 2}.
#include "nnfit/profile/xplane.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "nnfit/core/error.h"
#include "profile/host_info.h"
#include "profile/proto_wire.h"

namespace nnfit::profile {
namespace {

using namespace wire;

constexpr std::int64_t kArgStat = 1, kCategoryStat = 2;

std::string map_entry(std::int64_t key, const std::string& value) {
  std::string e;
  put_int64(e, 1, key);
  put_bytes(e, 2, value);
  return e;
}

std::string stat_metadata(std::int64_t id, const char* name) {
  std::string m;
  put_int64(m, 1, id);
  put_bytes(m, 2, name);
  return m;
}

// The wall-clock time (ns since the Unix epoch) of a steady-clock reading.
std::int64_t unix_ns_of(std::int64_t steady_ns) {
  const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
  return wall - (trace::now_ns() - steady_ns);
}

}  // namespace

std::string xspace_bytes(const trace::Collected& trace, const std::string& hostname) {
  std::int64_t begin = trace.session_begin_ns;
  for (const trace::Event& e : trace.events) begin = begin ? std::min(begin, e.begin_ns) : e.begin_ns;
  // Event metadata: one id (from 1) per distinct name.
  std::map<std::string, std::int64_t> ids;
  for (const trace::Event& e : trace.events) ids.emplace(e.name, static_cast<std::int64_t>(ids.size()) + 1);

  std::string plane;
  put_int64(plane, 1, 0);
  put_bytes(plane, 2, "/host:CPU");
  // Lines, one per thread (events arrive grouped by thread).
  for (std::size_t i = 0; i < trace.events.size();) {
    const std::int64_t tid = trace.events[i].thread_id;
    std::string line;
    put_int64(line, 1, tid);
    put_bytes(line, 2, trace.events[i].thread_name);
    put_int64(line, 3, unix_ns_of(begin));
    std::int64_t last_end = begin;
    for (; i < trace.events.size() && trace.events[i].thread_id == tid; ++i) {
      const trace::Event& e = trace.events[i];
      std::string ev;
      put_int64(ev, 1, ids.at(e.name));
      put_int64(ev, 2, (e.begin_ns - begin) * 1000);
      put_int64(ev, 3, (e.end_ns - e.begin_ns) * 1000);
      if (e.arg != 0) {
        std::string st;
        put_int64(st, 1, kArgStat);
        put_int64(st, 4, e.arg);
        put_bytes(ev, 4, st);
      }
      if (e.category && *e.category) {
        std::string st;
        put_int64(st, 1, kCategoryStat);
        put_bytes(st, 5, e.category);
        put_bytes(ev, 4, st);
      }
      put_bytes(line, 4, ev);
      last_end = std::max(last_end, e.end_ns);
    }
    put_int64(line, 9, (last_end - begin) * 1000);
    put_int64(line, 10, tid);
    put_bytes(plane, 3, line);
  }
  for (const auto& [name, id] : ids) {
    std::string m;
    put_int64(m, 1, id);
    put_bytes(m, 2, name);
    put_bytes(plane, 4, map_entry(id, m));
  }
  put_bytes(plane, 5, map_entry(kArgStat, stat_metadata(kArgStat, "arg")));
  put_bytes(plane, 5, map_entry(kCategoryStat, stat_metadata(kCategoryStat, "category")));

  std::string space;
  put_bytes(space, 1, plane);
  if (trace.dropped_events > 0) {
    put_bytes(space, 3, std::to_string(trace.dropped_events) + " trace events were dropped (the buffers were full)");
  }
  put_bytes(space, 4, hostname);
  return space;
}

std::string write_xplane(const trace::Collected& trace, const std::string& session_dir) {
  namespace fs = std::filesystem;
  const std::string host = host_name();
  const fs::path path = fs::path(session_dir) / (host + ".xplane.pb");
  const fs::path tmp = fs::path(session_dir) / (host + ".xplane.pb.tmp");
  const std::string bytes = xspace_bytes(trace, host);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw DataError(tmp.string(), -1, "cannot create the XSpace file", "check that the log directory is writable");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw DataError(tmp.string(), -1, "cannot write the XSpace file", "check free disk space");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw DataError(path.string(), -1, "cannot rename the XSpace file into place: " + ec.message(), "");
  return path.string();
}

}  // namespace nnfit::profile
