// Reads the scalars back out of a tfevents file: nnfit's own (simple_value) and TF2/Keras's
// (a rank-0 DT_FLOAT tensor). Used by tests and by reports built from a log directory.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nnfit::profile {

struct ScalarEvent {
  std::string tag;
  std::int64_t step = 0;
  double wall_time = 0;
  float value = 0;
};

struct EventFileContents {
  std::string file_version;          // "brain.Event:2" for a well-formed file
  std::vector<ScalarEvent> scalars;  // in file order
  bool truncated = false;            // the last record was cut short (a writer still appending)
};

// throws: DataError(path, offset of the record, ...) when the file cannot be opened, a CRC
// does not match or a record is not a valid Event. A truncated last record is not an
// error (TensorBoard retries it too); it sets `truncated`.
EventFileContents read_event_file(const std::string& path);

}  // namespace nnfit::profile
