// The per-step breakdown fit writes when it has a log dir: LOG_DIR/steps.jsonl, one JSON
// object per training step with exactly the keys of StepRecord (docs/cli.md "steps.jsonl").
// The writer buffers lines in memory and writes them at flush() (fit flushes at each
// epoch end), so logging costs a step a few hundred nanoseconds, not a write(2).
// Also here: the "10-20" step-range syntax of profile_steps / --profile-steps.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace nnfit::profile {

// One training step. Times are whole microseconds of wall time; the parts do not overlap,
// and what a step spends outside them (metric updates, the loss read-back) is not counted.
struct StepRecord {
  std::int64_t step = 0;                 // global step number, from 1
  std::int64_t input_wait_us = 0;        // waiting for the next batch (the pipeline's next())
  std::int64_t h2d_us = 0;               // host-to-device copy (0 on CPU: batches are read in place)
  std::int64_t forward_us = 0;           // forward kernels and the loss
  std::int64_t backward_us = 0;          // backward kernels
  std::int64_t allreduce_us = 0;         // waiting for the gradient sums after backward (0 in one process)
  std::int64_t update_us = 0;            // optimizer update kernels
  std::int64_t callbacks_us = 0;         // on_train_batch_begin and _end of every callback
  std::int64_t memory_in_use_bytes = 0;  // the device allocator's bytes in use after the step
  std::int64_t total_us() const {
    return input_wait_us + h2d_us + forward_us + backward_us + allreduce_us + update_us + callbacks_us;
  }
};

// {"step":1,"input_wait_us":12,...,"memory_in_use_bytes":2303104}, keys in StepRecord's order.
std::string step_json(const StepRecord& record);

// Reads a steps.jsonl: every non-empty line one object with exactly StepRecord's keys, each
// a non-negative integer. throws: DataError(path, byte offset of the line, "line N: ...")
// when the file cannot be read or a line is truncated, garbled, or has a missing,
// unknown or repeated key.
std::vector<StepRecord> read_step_log(const std::string& path);

// Appends step_json() lines to a file. Owns the file; not thread-safe.
class StepLogWriter {
 public:
  // Opens `path` (truncating it unless `append`); the directory must exist.
  // throws: DataError(path, -1, ...) when it cannot be opened.
  StepLogWriter(const std::string& path, bool append);
  ~StepLogWriter();  // flushes; errors are swallowed (call flush() to see them)
  StepLogWriter(const StepLogWriter&) = delete;
  StepLogWriter& operator=(const StepLogWriter&) = delete;

  void add(const StepRecord& record);  // buffered in memory
  // Writes the buffered lines through to the OS. throws: DataError on a write error.
  void flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
};

// Steps [first, last], global step numbers from 1, inclusive.
struct StepRange {
  std::int64_t first = 0, last = 0;
  bool contains(std::int64_t step) const { return step >= first && step <= last; }
};
// "10-20" (steps 10 to 20) or "15" (step 15 alone). throws: InvalidArgument naming the text
// and the expected form when it is malformed, has a step below 1, or first > last.
StepRange parse_step_range(std::string_view text);

}  // namespace nnfit::profile
