// tfevents writer. Field numbers, checked against tensorflow/tensorflow
// tensorflow/core/util/event.proto and tensorflow/core/framework/summary.proto (proto3,
// package tensorflow; TensorBoard's copies in tensorboard/compat/proto/ match):
//   Event   { double wall_time = 1; int64 step = 2;
//             oneof what { string file_version = 3; ...; Summary summary = 5; ... } }
//   Summary { repeated Value value = 1; }
//   Summary.Value { string tag = 1; oneof value { float simple_value = 2; ... } }
// Framing and the CRC mask follow TF's record_writer / tsl crc32c.h (core/crc32c.h).
#include "nnfit/profile/event_file_writer.h"

#include <unistd.h>

#include <atomic>
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
constexpr std::uint32_t kValueTag = 1, kValueSimpleValue = 2;
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

std::string encode_scalar_event(std::string_view tag, float value, std::int64_t step, double wall_time) {
  std::string v;
  wire::put_bytes(v, kValueTag, tag);
  wire::put_float(v, kValueSimpleValue, value);
  std::string summary;
  wire::put_bytes(summary, kSummaryValue, v);
  std::string e;
  wire::put_double(e, kEventWallTime, wall_time);
  if (step != 0) wire::put_int64(e, kEventStep, step);  // proto3: a zero scalar is not written
  wire::put_bytes(e, kEventSummary, summary);
  return e;
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
