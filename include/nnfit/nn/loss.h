// Losses by Keras name. A Loss emits the `loss` op (scalar mean over the batch) and knows
// the target dtype/shape it expects, so data can be checked before the first step.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nnfit/core/tensor.h"
#include "nnfit/graph/graph.h"

namespace nnfit {

class OperationGraph;

struct Loss {
  // sparse_categorical_crossentropy, categorical_crossentropy, binary_crossentropy,
  // mean_squared_error, mean_absolute_error, mean_absolute_percentage_error,
  // mean_squared_logarithmic_error, huber, log_cosh, poisson, kl_divergence, hinge,
  // squared_hinge, categorical_hinge, cosine_similarity, binary_focal_crossentropy,
  // categorical_focal_crossentropy (Keras's functions' names)
  std::string kind;
  bool from_logits = false;
  double label_smoothing = 0.0;        // categorical, binary and focal crossentropies
  double delta = 1.0;                  // huber
  double alpha = 0.25, gamma = 2.0;    // focal crossentropies
  bool apply_class_balancing = false;  // binary focal crossentropy
  // Given as Keras's function (keras.losses.mean_squared_error, which compile_config holds
  // as {"module": "builtins", "class_name": "function", "config": "mean_squared_error"}):
  // written back in that form.
  bool keras_function = false;

  // kind "custom": a loss written in Python with keras.ops (a function, a keras.losses.Loss
  // subclass) and traced by nnfit.keras (Note [Traced losses and metrics] in
  // src/nn/traced_metric.cpp): `traced` maps (y_true, y_pred) to the loss values, which
  // emit() reduces as Keras's Loss does with `reduction` ("sum_over_batch_size" or "mean",
  // "sum", "mean_with_sample_weight"); y_true is float32 of `target_shape` (without the
  // batch axis); `object_json` is Keras's serialization of the loss with the trace, written
  // back unchanged; `name` names it in messages.
  std::shared_ptr<const OperationGraph> traced;
  // Keras's Model.compute_loss override, traced (reduction "compute_loss"; Note [compute_loss
  // in the step] in src/nn/loss.cpp): one loss for the whole model, whose graphs read
  // (x..., y..., y_pred...) and `traced_weighted` also sample_weight: `compute_loss_inputs`
  // model inputs, then a target and a prediction per output (`target_shapes`, one per
  // output). Each gives the loss, a scalar used as it is.
  std::shared_ptr<const OperationGraph> traced_weighted;
  std::string reduction = "sum_over_batch_size";
  Shape target_shape;
  std::size_t compute_loss_inputs = 0;
  std::vector<Shape> target_shapes;
  std::string object_json;
  std::string name;

  // Keras's class name for `kind` ("MeanAbsoluteError"); empty for an unknown kind.
  static std::string class_name_of(const std::string& kind);
  // Whether `kind` takes from_logits / label_smoothing as Keras's class does.
  static bool takes_from_logits(const std::string& kind);
  static bool takes_label_smoothing(const std::string& kind);

  // Parses a Keras name or alias ("mse", "SparseCategoricalCrossentropy"); throws
  // InvalidArgument listing the known names.
  static Loss from_name(const std::string& name, bool from_logits = false);
  // The target's description for a batch of predictions `pred` of output `output`.
  TensorDesc target_desc(const TensorDesc& pred, std::size_t output = 0) const;
  // `sample_weight`: a [batch] value weighting each sample's loss, or -1.
  // requires: not a compute_loss (emit_compute_loss).
  int emit(Graph& graph, int pred, int target, int sample_weight = -1) const;

  bool computes_loss() const { return reduction == "compute_loss"; }
  // This loss as output `output`'s metrics see it: a compute_loss with that output's
  // target shape; any other loss as it is.
  Loss for_output(std::size_t output) const;
  // Whether the compute_loss override reads y (else the model takes no targets for it).
  bool reads_targets() const;
  // The compute_loss override's loss over the model's inputs `xs`, targets `ys` (one per
  // output, or none when it reads no targets) and predictions `preds`.
  // throws: InvalidArgument when it does not give one number.
  int emit_compute_loss(Graph& graph, const std::vector<int>& xs, const std::vector<int>& ys,
                        const std::vector<int>& preds, int sample_weight = -1) const;
};

}  // namespace nnfit
