// MirroredStrategy and MultiWorkerMirroredStrategy (nnfit/dist/strategy.h): what they
// hold and the checks that keep MirroredStrategy honest about the devices it runs.
#include "nnfit/dist/strategy.h"

#include <algorithm>
#include <string>

#include "nnfit/core/error.h"

namespace nnfit::dist {

namespace {

std::string device_list(const std::vector<Device>& devices) {
  std::string s;
  for (const Device& d : devices) s += (s.empty() ? "" : ", ") + d.to_string();
  return s;
}

}  // namespace

MirroredStrategy::MirroredStrategy(std::vector<Device> devices) : devices_(std::move(devices)) {
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    NNFIT_CHECK(std::find(devices_.begin(), devices_.begin() + static_cast<std::ptrdiff_t>(i), devices_[i]) ==
                    devices_.begin() + static_cast<std::ptrdiff_t>(i),
                InvalidArgument, "MirroredStrategy: device ", devices_[i].to_string(), " is listed twice");
  }
  // nnfit runs a model's steps on one device, the CPU backend's: its local devices are
  // that one. Several replicas in one process (one per GPU, summed on the device) are not
  // built; a process per device under mpirun is (MultiWorkerMirroredStrategy).
  if (devices_.size() > 1) {
    throw Unsupported("MirroredStrategy over " + std::to_string(devices_.size()) + " devices (" +
                          device_list(devices_) + "): nnfit runs one replica per process",
                      "launch one process per device with mpirun and use MultiWorkerMirroredStrategy "
                      "(docs/design/distributed.md, \"Launching\")");
  }
  if (devices_.empty()) devices_.push_back(Device{});
  if (!(devices_[0] == Device{})) {
    throw Unsupported("MirroredStrategy on " + devices_[0].to_string() + ": nnfit's models train on cpu:0",
                      "use MirroredStrategy() or MirroredStrategy({cpu:0})");
  }
}

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(CommunicationOptions options)
    : MultiWorkerMirroredStrategy(
          [&] {
            CommunicatorOptions co;
            co.timeout_s = options.timeout_seconds;
            return std::shared_ptr<Communicator>(make_communicator(co));
          }(),
          options) {}

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(std::shared_ptr<Communicator> communicator,
                                                         CommunicationOptions options)
    : comm_(std::move(communicator)), options_(options) {
  NNFIT_CHECK(comm_ != nullptr, InvalidArgument, "MultiWorkerMirroredStrategy: the communicator is null",
              "pass make_communicator()'s, or use the constructor that makes one");
  NNFIT_CHECK(options_.bytes_per_pack >= 0, InvalidArgument,
              "MultiWorkerMirroredStrategy: bytes_per_pack must be >= 0, got ", options_.bytes_per_pack);
  NNFIT_CHECK(options_.timeout_seconds > 0, InvalidArgument,
              "MultiWorkerMirroredStrategy: timeout_seconds must be positive, got ", options_.timeout_seconds);
}

}  // namespace nnfit::dist
