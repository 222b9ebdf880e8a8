// tfevents writer. Field numbers, checked against tensorflow/tensorflow
// tensorflow/core/util/event.proto and tensorflow/core/framework/summary.proto (proto3,
// package tensorflow; TensorBoard's copies in tensorboard/compat/proto/ match):
//   Event   { double wall_time = 1; int64 step = 2;
//             oneof what { string file_version = 3; ...; Summary summary = 5; ... } }
//   Summary { repeated Value value = 1; }
//   Summary.Value { string tag = 1; SummaryMetadata metadata = 9;
//                   oneof value { float simple_value = 2; ...; TensorProto tensor = 8; } }
// Framing and the CRC mask follow TF's record_writer / tsl crc32c.h (core/crc32c.h).
#include "nnfit/profile/event_file_writer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "nnfit/core/crc32c.h"
#include "nnfit/core/error.h"
#include "profile/host_info.h"
#include "profile/proto_wire.h"

namespace nnfit::profile {
namespace {

constexpr std::uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5;
constexpr std::uint32_t kSummaryValue = 1;
constexpr std::uint32_t kValueTag = 1, kValueSimpleValue = 2, kValueTensor = 8, kValueMetadata = 9;
// TensorProto { DataType dtype = 1; TensorShapeProto tensor_shape = 2; bytes tensor_content = 4; }
// TensorShapeProto { repeated Dim dim = 2; }  Dim { int64 size = 1; }
// SummaryMetadata { PluginData plugin_data = 1; }  PluginData { string plugin_name = 1; bytes content = 2; }
constexpr std::uint32_t kTensorDtype = 1, kTensorShape = 2, kTensorContent = 4, kShapeDim = 2, kDimSize = 1;
constexpr std::uint32_t kMetadataPluginData = 1, kPluginName = 1;
constexpr std::int64_t kDtDouble = 2;
constexpr std::int64_t kHistogramBuckets = 30;  // tf.summary.histogram's DEFAULT_BUCKET_COUNT
constexpr std::string_view kFileVersion = "brain.Event:2";

// Distinguishes writers opened by this process in the same second (TF's <uid>).
std::atomic<std::int64_t> g_writers_opened{0};

void put_le32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

std::string encode_file_version_event(double wall_time) {
  std::string e;
  wire::put_double(e, kEventWallTime, wall_time);
  wire::put_bytes(e, kEventFileVersion, kFileVersion);
  return e;
}

namespace {

// Event{wall_time, step, summary{value}} around one serialized Summary.Value.
std::string encode_summary_event(std::string_view value, std::int64_t step, double wall_time) {
  std::string summary;
  wire::put_bytes(summary, kSummaryValue, value);
  std::string e;
  wire::put_double(e, kEventWallTime, wall_time);
  if (step != 0) wire::put_int64(e, kEventStep, step);  // proto3: a zero scalar is not written
  wire::put_bytes(e, kEventSummary, summary);
  return e;
}

}  // namespace

std::string encode_scalar_event(std::string_view tag, float value, std::int64_t step, double wall_time) {
  std::string v;
  wire::put_bytes(v, kValueTag, tag);
  wire::put_float(v, kValueSimpleValue, value);
  return encode_summary_event(v, step, wall_time);
}

// TensorBoard's histogram summary (tensorboard/plugins/histogram/summary_v2.py _buckets, as
// tf.summary.histogram computes it in float64): 30 buckets of equal width from the minimum
// to the maximum (the last edge exactly the maximum), a value counted in bucket
// floor((v - min) / width) clamped to the last; all values equal: every edge that value,
// the count in the last bucket; no values: all zeros. The Summary.Value is a [30, 3] DT_DOUBLE
// tensor with the "histograms" plugin's metadata (its HistogramPluginData{version 0} is empty).
std::string encode_histogram_event(std::string_view tag, const std::vector<double>& values, std::int64_t step,
                                   double wall_time) {
  const std::int64_t k = kHistogramBuckets;
  std::vector<double> rows(static_cast<std::size_t>(3 * k), 0.0);  // (left, right, count) per bucket
  if (!values.empty()) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const double min = *lo, max = *hi, range = max - min;
    if (range == 0) {
      for (std::int64_t b = 0; b < k; ++b) rows[static_cast<std::size_t>(3 * b)] = rows[static_cast<std::size_t>(3 * b + 1)] = max;
      rows[static_cast<std::size_t>(3 * k - 1)] = static_cast<double>(values.size());
    } else {
      const double width = range / static_cast<double>(k);
      std::vector<double> edges(static_cast<std::size_t>(k + 1));
      const double step_size = range / static_cast<double>(k);  // tf.linspace: start + i * (stop - start) / (num - 1)
      for (std::int64_t i = 0; i <= k; ++i) edges[static_cast<std::size_t>(i)] = min + step_size * static_cast<double>(i);
      edges.back() = max;
      for (double v : values) {
        const auto b = std::min<std::int64_t>(static_cast<std::int64_t>(std::floor((v - min) / width)), k - 1);
        rows[static_cast<std::size_t>(3 * b + 2)] += 1.0;
      }
      for (std::int64_t b = 0; b < k; ++b) {
        rows[static_cast<std::size_t>(3 * b)] = edges[static_cast<std::size_t>(b)];
        rows[static_cast<std::size_t>(3 * b + 1)] = edges[static_cast<std::size_t>(b + 1)];
      }
    }
  }
  std::string content;
  for (double r : rows) {
    std::uint64_t bits;
    std::memcpy(&bits, &r, sizeof bits);
    for (int i = 0; i < 8; ++i) content.push_back(static_cast<char>(bits >> (8 * i)));
  }
  std::string shape, dim;
  wire::put_int64(dim, kDimSize, k);
  wire::put_bytes(shape, kShapeDim, dim);
  dim.clear();
  wire::put_int64(dim, kDimSize, 3);
  wire::put_bytes(shape, kShapeDim, dim);
  std::string tensor;
  wire::put_int64(tensor, kTensorDtype, kDtDouble);
  wire::put_bytes(tensor, kTensorShape, shape);
  wire::put_bytes(tensor, kTensorContent, content);
  std::string plugin, metadata;
  wire::put_bytes(plugin, kPluginName, "histograms");
  wire::put_bytes(metadata, kMetadataPluginData, plugin);
  std::string v;
  wire::put_bytes(v, kValueTag, tag);
  wire::put_bytes(v, kValueTensor, tensor);
  wire::put_bytes(v, kValueMetadata, metadata);
  return encode_summary_event(v, step, wall_time);
}

std::string frame_record(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  const std::uint64_t n = data.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(n >> (8 * i)));
  put_le32(out, mask_crc(crc32c(out.data(), 8)));
  out.append(data);
  put_le32(out, mask_crc(crc32c(data.data(), data.size())));
  return out;
}

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

EventFileWriter::EventFileWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw DataError(dir, -1, "cannot create the TensorBoard log directory: " + ec.message(),
                          "check that the log directory is writable");
  const double now = wall_time_now();
  char name[512];
  std::snprintf(name, sizeof name, "events.out.tfevents.%010lld.%s.%lld.%lld.v2", static_cast<long long>(now),
                host_name().c_str(), static_cast<long long>(::getpid()),
                static_cast<long long>(g_writers_opened.fetch_add(1) + 1));
  path_ = (std::filesystem::path(dir) / name).string();
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) throw DataError(path_, -1, "cannot create the TensorBoard event file: " + errno_text(),
                                        "check that the log directory is writable");
  write_record(encode_file_version_event(now));
}

EventFileWriter::~EventFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void EventFileWriter::add_scalar(std::string_view tag, double value, std::int64_t step, double wall_time) {
  write_record(encode_scalar_event(tag, static_cast<float>(value), step, wall_time < 0 ? wall_time_now() : wall_time));
}

void EventFileWriter::add_histogram(std::string_view tag, const std::vector<double>& values, std::int64_t step,
                                    double wall_time) {
  write_record(encode_histogram_event(tag, values, step, wall_time < 0 ? wall_time_now() : wall_time));
}

void EventFileWriter::write_record(std::string_view data) {
  if (file_ == nullptr) throw DataError(path_, -1, "the TensorBoard event file is closed", "write before close()");
  const std::string rec = frame_record(data);
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size() || std::fflush(file_) != 0) {
    throw DataError(path_, -1, "cannot write the TensorBoard event file: " + errno_text(), "check free disk space");
  }
}

void EventFileWriter::close() {
  if (file_ == nullptr) return;
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) throw DataError(path_, -1, "cannot close the TensorBoard event file: " + errno_text(),
                                           "check free disk space");
}

}  // namespace nnfit::profile
