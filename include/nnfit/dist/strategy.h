// Distribution strategies (TensorFlow's tf.distribute names; docs/design/distributed.md):
// what a model's replicas are and how their gradients are summed, chosen before
// compile with Model::set_strategy. MultiWorkerMirroredStrategy: one replica per process,
// the processes joined by a Communicator (MPI under mpirun). MirroredStrategy: one
// replica per local device of a process; nnfit's models run on one device, so it holds
// exactly one (the CPU here) and is the one-process case; it refuses several devices
// instead of pretending to run them.
//
// Thread safety: a strategy is immutable after construction; the communicator it holds
// is used from one thread (the training loop's).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nnfit/core/device.h"
#include "nnfit/dist/communicator.h"

namespace nnfit::dist {

// TensorFlow's tf.distribute.experimental.CommunicationOptions, in nnfit's terms.
// TensorFlow's CommunicationImplementation: how a device model's gradients are summed.
// automatic: on the device over NCCL where every rank can load it, else in host memory
// over the host communicator (a note says why); ring: in host memory over the host
// communicator (MPI); nccl: on the device over NCCL, an error where it cannot be used.
// A model on the CPU always sums in host memory.
enum class CommunicationImplementation { automatic, ring, nccl };

struct CommunicationOptions {
  // Gradients are summed in buckets ("packs") of about this many bytes, in reverse layer
  // order, each started as soon as the backward pass has produced it (Note [Gradient
  // buckets]); 0: one bucket per weight. The default was chosen by measurement.
  std::int64_t bytes_per_pack = 256 << 10;
  // false: every bucket starts after the backward pass (for measuring the overlap).
  bool overlap = true;
  // The collective watchdog's deadline (Note [Collective watchdog]); used when the
  // strategy makes its own communicator.
  double timeout_seconds = 300;
  CommunicationImplementation implementation = CommunicationImplementation::automatic;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // "MirroredStrategy", "MultiWorkerMirroredStrategy".
  virtual std::string name() const = 0;
  // Replicas whose gradients every step sums: Keras's strategy.num_replicas_in_sync.
  // A global batch must split evenly across them.
  virtual int num_replicas_in_sync() const = 0;
  // This process's first replica's index among all (its rank), and the devices its
  // replicas run on.
  virtual int replica_index() const = 0;
  virtual std::vector<Device> devices() const = 0;
  // The communicator the replicas sum through; null: one replica, nothing to sum.
  virtual std::shared_ptr<Communicator> communicator() const = 0;
  virtual const CommunicationOptions& communication_options() const = 0;
};

// One replica per local device. requires: `devices` empty (every local device of a
// model: the one it runs on) or exactly that device; nnfit has no in-process replicas
// over several devices (issue 18: use MultiWorkerMirroredStrategy, one process per device).
// throws: Unsupported naming the devices otherwise; InvalidArgument for a device listed twice.
class MirroredStrategy final : public Strategy {
 public:
  explicit MirroredStrategy(std::vector<Device> devices = {});
  std::string name() const override { return "MirroredStrategy"; }
  int num_replicas_in_sync() const override { return 1; }
  int replica_index() const override { return 0; }
  std::vector<Device> devices() const override { return devices_; }
  std::shared_ptr<Communicator> communicator() const override { return nullptr; }
  const CommunicationOptions& communication_options() const override { return options_; }

 private:
  std::vector<Device> devices_;
  CommunicationOptions options_;
};

// One replica per process, over `communicator` (shared with the caller; e.g. the one
// make_communicator gives under mpirun). The default constructor makes its own with
// make_communicator(timeout_seconds): MPI when a launcher started several ranks, one
// process otherwise (then num_replicas_in_sync() is 1 and training is the one-process
// training). throws: what make_communicator throws; InvalidArgument for a negative
// bytes_per_pack or a null communicator.
class MultiWorkerMirroredStrategy final : public Strategy {
 public:
  explicit MultiWorkerMirroredStrategy(CommunicationOptions options = {});
  MultiWorkerMirroredStrategy(std::shared_ptr<Communicator> communicator, CommunicationOptions options = {});
  std::string name() const override { return "MultiWorkerMirroredStrategy"; }
  int num_replicas_in_sync() const override { return comm_->size(); }
  int replica_index() const override { return comm_->rank(); }
  std::vector<Device> devices() const override { return {Device{}}; }  // the process's CPU
  std::shared_ptr<Communicator> communicator() const override { return comm_; }
  const CommunicationOptions& communication_options() const override { return options_; }

 private:
  std::shared_ptr<Communicator> comm_;
  CommunicationOptions options_;
};

}  // namespace nnfit::dist
