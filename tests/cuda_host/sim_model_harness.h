// The cuda-sim model tests' harness (sim_model_test.cpp, sim_scaled_test.cpp): the same
// model built on the sim or on the CPU, and the comparisons between the two.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnfit/backend/backend.h"
#include "nnfit/backend/device_queues.h"
#include "nnfit/memory/memory_policy.h"
#include "nnfit/model/model.h"

namespace nnfit::testing::sim_model {

using Build = std::function<void(Sequential&)>;

// The sim backend's queues of the last model make() built on the sim (for counting the
// graphs it replayed), and its backend (owned by the model), for its copy counts.
extern DeviceQueues* g_last_queues;
extern Backend* g_last_backend;
// The optimizer make() compiles with (Adam at 0.01 unless a test says otherwise).
extern OptimizerOptions g_optimizer;

// The model `build` adds layers to, on the sim (sim = true) or the CPU, compiled with
// g_optimizer and sparse cross-entropy from logits, with accuracy, under `policy`; on
// the CPU `memory` applies only when it sets a limit.
std::unique_ptr<Sequential> make(bool sim, const Build& build, const std::string& policy = "float32",
                                 const MemoryPolicy& memory = {});
// sim_data's (x, y).
std::pair<Tensor, Tensor> data(std::int64_t n, const Shape& shape, std::uint32_t seed);
// The optimizer slots share the model's buffers (device memory on the sim): host copies.
std::vector<Tensor> slots(const Model& m);
// Every tensor within tol · (1 + |want|), host tensors of the same shapes.
void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, float tol, const char* what);
// Trains the model `build` makes on the sim and on the CPU (3 epochs, validation, a last
// partial batch) and compares the epoch logs, the weights, evaluate and predict.
// `launches`: the graphs fit launches (Note [Captured steps]: a program whose kernels are all
// capturable is captured at its first run and every run launches it), so the replays carry
// the steps' values: 3 epochs of 5 training batches (4 of 64, one of 44) and 2 validation
// batches (64, 6) give 21 where every program is captured.
void expect_trains_like_the_cpu(const Build& build, const Shape& shape, std::int64_t launches,
                                const std::string& policy = "float32", float tol = 2e-4f);

}  // namespace nnfit::testing::sim_model
