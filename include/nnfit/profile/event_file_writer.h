// TensorBoard event files (tfevents): TFRecord framing (length, masked CRC-32C of the
// length, data, masked CRC-32C of the data) of hand-encoded tensorflow.Event protos. Scalars
// are written as Summary.Value.simple_value, the legacy form every TensorBoard (Python loader
// and Rust data server), tensorboardX and PyTorch read; field numbers and their sources are
// in docs/design/profile.md.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace nnfit::profile {

// The serialized Event{wall_time, file_version: "brain.Event:2"} every file starts with.
std::string encode_file_version_event(double wall_time);
// The serialized Event{wall_time, step, summary{value{tag, simple_value}}}.
std::string encode_scalar_event(std::string_view tag, float value, std::int64_t step, double wall_time);
// Event{wall_time, step, summary{value{tag, tensor: a [30, 3] float64 histogram of `values`,
// metadata{plugin_data{plugin_name: "histograms"}}}}} (EventFileWriter::add_histogram).
std::string encode_histogram_event(std::string_view tag, const std::vector<double>& values, std::int64_t step,
                                   double wall_time);
// One TFRecord: uint64 length, masked CRC-32C of it, data, masked CRC-32C of the data (LE).
std::string frame_record(std::string_view data);
// Seconds since the Unix epoch, fractional (Event.wall_time).
double wall_time_now();

// One events file in `dir`, named as TF2's summary writer names it:
// events.out.tfevents.<10-digit unix seconds>.<hostname>.<pid>.<n>.v2, with n counting the
// writers this process opened (so two writers in one second get two files). Owns its file.
// Not thread-safe. Each add_scalar() is written through to the OS (fflush) so TensorBoard
// sees an epoch as soon as it ends; it tolerates a truncated last record while we append.
class EventFileWriter {
 public:
  // Creates `dir` (and parents) and the file, and writes the file_version event.
  // throws: DataError(path, -1, ...) when the directory or file cannot be created.
  explicit EventFileWriter(const std::string& dir);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // A scalar at `step`; stored as float32 (simple_value), so integers above 2^24 keep
  // about 7 significant digits. wall_time < 0: now. throws: DataError on a write error.
  void add_scalar(std::string_view tag, double value, std::int64_t step, double wall_time = -1);
  // A histogram of `values` as TensorFlow 2's tf.summary.histogram writes it (TensorBoard's
  // histograms plugin): a float64 [30, 3] tensor of (left edge, right edge, count).
  void add_histogram(std::string_view tag, const std::vector<double>& values, std::int64_t step, double wall_time = -1);
  // Finishes the file; later add_scalar() calls throw. Errors are reported here; the
  // destructor closes too but swallows them.
  void close();
  const std::string& path() const { return path_; }

 private:
  void write_record(std::string_view data);
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace nnfit::profile
