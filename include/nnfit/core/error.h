// The error hierarchy every module throws. Library code never exits or aborts on input
// a user can reach; the CLI maps these types to one line, a hint and an exit code.
#pragma once
#include <cstdint>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "nnfit/core/device.h"
#include "nnfit/core/memory_stats.h"

namespace nnfit {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, std::string hint = {})
      : std::runtime_error(what), hint_(std::move(hint)) {}
  // What the user can do about it; may be empty.
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// A caller passed something wrong: a bad shape, an unknown name, a bad config value.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Valid but not implemented (an op on a device, a layer option).
class Unsupported : public Error {
 public:
  using Error::Error;
};

// What an allocator saw when it refused a request: a structured copy of the figures the
// message names, for callers that react to them (a smaller batch, a report).
struct OutOfMemoryDetails {
  Device device;                  // the allocator's device
  std::int64_t request_bytes = 0;  // the request, rounded as the allocator counts it
  std::int64_t limit_bytes = 0;    // the policy's hard limit; 0: none
  MemoryStats stats;              // the allocator's figures at the refusal (ooms counts it)
};

class OutOfMemory : public Error {
 public:
  using Error::Error;
  OutOfMemory(const std::string& what, std::string hint, std::shared_ptr<const OutOfMemoryDetails> details)
      : Error(what, std::move(hint)), details_(std::move(details)) {}
  // Set when a device allocator refused a request (BfcAllocator, HostAllocator, the CUDA
  // allocator), and kept by callers that add context to the message; null for failures
  // outside one (the input pipeline's RAM budget, a host tensor's own buffer).
  const OutOfMemoryDetails* details() const { return details_.get(); }
  // The same details, to pass on when rethrowing with more context.
  const std::shared_ptr<const OutOfMemoryDetails>& shared_details() const { return details_; }

 private:
  std::shared_ptr<const OutOfMemoryDetails> details_;  // shared: exceptions copy cheaply
};

// Bad or unreadable data: carries the file and byte offset where it went wrong.
class DataError : public Error {
 public:
  DataError(const std::string& file, std::int64_t offset, const std::string& what,
            std::string hint = {});
  const std::string& file() const { return file_; }
  std::int64_t offset() const { return offset_; }

 private:
  std::string file_;
  std::int64_t offset_;
};

// A vendor library (oneDNN, CUDA) failed; the message carries the vendor's text.
class BackendError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace detail

}  // namespace nnfit

// NNFIT_CHECK(cond, ErrorType, message parts...): throws ErrorType(concat(parts)) if !cond.
#define NNFIT_CHECK(cond, ErrorType, ...)                       \
  do {                                                          \
    if (!(cond)) throw ErrorType(::nnfit::detail::concat(__VA_ARGS__)); \
  } while (0)
