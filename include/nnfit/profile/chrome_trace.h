// Chrome Trace Event export of a trace session, in the layout Keras and TensorBoard's
// profile plugin use: LOGDIR/<run>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz.
// Opens in Perfetto, chrome://tracing and tensorboard-plugin-profile <= 2.19 (newer plugin
// versions read only <host>.xplane.pb; see docs/design/profile.md).
#pragma once
#include <cstdint>
#include <string>

#include "nnfit/core/trace.h"

namespace nnfit::profile {

struct ChromeTraceOptions {
  std::int64_t pid = 0;                 // 0: this process's id
  std::string process_name = "nnfit";  // shown as the process row's title
};

// The object form {"displayTimeUnit":"ns","traceEvents":[...],"otherData":{...}}: one "M"
// process_name event, "M" thread_name and thread_sort_index events per thread, and one "X"
// complete event per range with ts (µs since the session began, ns precision), dur (µs),
// pid, tid (trace's thread id), cat when given and args {"arg": n}. otherData carries
// dropped_events. Events stay in collect()'s order (per thread, parents first).
std::string chrome_trace_json(const trace::Collected& trace, const ChromeTraceOptions& options = {});

// Gzips chrome_trace_json() into LOGDIR/<run>/plugins/profile/<session>/<host>.trace.json.gz
// (session: local time %Y_%m_%d_%H_%M_%S, with a _<n> suffix if that directory already
// exists) through a temporary file and a rename, so a reader never sees half a file.
// Returns the path. throws: DataError when the directories or the file cannot be written.
std::string write_chrome_trace(const trace::Collected& trace, const std::string& log_dir,
                               const std::string& run = "train", const ChromeTraceOptions& options = {});

}  // namespace nnfit::profile
