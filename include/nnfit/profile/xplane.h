// XSpace export of a trace session: the `<host>.xplane.pb` that current TensorBoard
// profile plugins (XProf, tensorboard-plugin-profile >= 2.20) read instead of the Chrome
// trace JSON. Schema: TensorFlow's xplane.proto (package tensorflow.profiler; field numbers
// in src/profile/xplane.cpp and docs/design/profile.md).
#pragma once
#include <string>

#include "nnfit/core/trace.h"

namespace nnfit::profile {

// One XPlane "/host:CPU" with one XLine per traced thread (id = nnfit's thread id, name =
// the thread's name, timestamp_ns = the session's start in Unix time), one XEvent per
// range (offset_ps from the line's start, duration_ps), event metadata per distinct range
// name, and XStats "arg" (int64, when non-zero) and "category" (string, when given).
// The XSpace's hostnames holds `hostname`.
std::string xspace_bytes(const trace::Collected& trace, const std::string& hostname);

// Writes xspace_bytes() to DIR/<host>.xplane.pb (through a temporary file and a rename;
// DIR is the session directory write_chrome_trace made). Returns the path.
// throws: DataError when the file cannot be written.
std::string write_xplane(const trace::Collected& trace, const std::string& session_dir);

}  // namespace nnfit::profile
