// Data-parallel training from C++ (docs/design/distributed.md, "Strategies"): the same
// program trains alone, or under `mpirun -np N` as N replicas of one model, one per
// process, through MultiWorkerMirroredStrategy chosen before compile. The global batch is
// the same either way, so N ranks follow the one-process run to float rounding (Dropout
// included); rank 0 alone prints.
//   usage: data_parallel [EPOCHS]
//   mpirun -np 2 build/release/example_data_parallel
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "nnfit/core/error.h"
#include "nnfit/dist/strategy.h"
#include "nnfit/model/model.h"
#include "nnfit/nn/layers.h"

int main(int argc, char** argv) {
  using namespace nnfit;
  std::shared_ptr<dist::MultiWorkerMirroredStrategy> strategy;
  try {
    const std::int64_t epochs = argc > 1 ? std::atoll(argv[1]) : 3;
    // MPI under a launcher with several ranks; one process otherwise.
    strategy = std::make_shared<dist::MultiWorkerMirroredStrategy>(
        dist::CommunicationOptions{.bytes_per_pack = 256 << 10, .timeout_seconds = 60});
    const bool root = strategy->replica_index() == 0;

    Sequential model("mlp");
    model.set_strategy(strategy);  // before compile
    model.set_num_threads(1);
    model.set_seed(1);
    model.set_input_shape(Shape{8});
    model.add(std::make_unique<Dense>("dense", DenseOptions{.units = 16, .activation = "relu"}));
    model.add(std::make_unique<Dropout>("dropout", 0.25));
    model.add(std::make_unique<Dense>("dense_1", DenseOptions{.units = 3}));
    model.compile({.optimizer = {.name = "adam"},
                   .loss = Loss::from_name("sparse_categorical_crossentropy", /*from_logits=*/true),
                   .metrics = {"accuracy"}});

    // Every rank makes the same data (as every rank of `nnfit train` reads the same files).
    const std::int64_t n = 96;
    Tensor x = Tensor::zeros(Shape{n, 8}, DType::f32), y = Tensor::zeros(Shape{n}, DType::i32);
    for (std::int64_t i = 0; i < n; ++i) {
      float s = 0;
      for (std::int64_t j = 0; j < 8; ++j) s += x.data<float>()[i * 8 + j] = std::sin(0.37f * (i * 8 + j));
      y.data<std::int32_t>()[i] = s > 0.5f ? 2 : s > -0.5f ? 1 : 0;
    }
    FitOptions fit;
    fit.epochs = epochs;
    fit.batch_size = 24;  // the global batch: it must divide by num_replicas_in_sync()
    fit.seed = 1;
    const History history = model.fit(x, y, fit);
    if (root) {
      double weight_sum = 0;
      for (const Tensor& w : model.get_weights()) {
        for (std::int64_t i = 0; i < w.numel(); ++i) weight_sum += std::fabs(w.data<float>()[i]);
      }
      std::printf("replicas %d (%s)\n", strategy->num_replicas_in_sync(), strategy->name().c_str());
      std::printf("loss %.9g\n", log_value(history.epochs.back(), "loss"));
      std::printf("weight_abs_sum %.9g\n", weight_sum);
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    // Under mpirun: end every rank now instead of leaving them to the watchdog.
    if (strategy && strategy->num_replicas_in_sync() > 1) strategy->communicator()->abort_job(e.what(), 1);
    return 1;
  }
}
