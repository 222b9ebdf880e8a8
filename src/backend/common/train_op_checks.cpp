// Desc validation of the training ops (bias, add_n, reshape, losses, batch norm, dropout,
// optimizers); see train_op_checks.h. Messages name the op, the node and the offending
// tensor so a graph bug can be traced to its layer.
#include "backend/common/train_op_checks.h"

#include "nnfit/core/error.h"

namespace nnfit {

namespace {

void expect_arity(const KernelDesc& desc, std::size_t inputs, std::size_t outputs) {
  NNFIT_CHECK(desc.inputs.size() == inputs && desc.outputs.size() == outputs, InvalidArgument,
              desc.where(), ": expected ", inputs, " inputs and ", outputs, " outputs, got ",
              desc.inputs.size(), " and ", desc.outputs.size());
}

// 'i' for input, 'o' for output.
const TensorDesc& tensor(const KernelDesc& desc, char io, std::size_t index) {
  return io == 'i' ? desc.inputs[index] : desc.outputs[index];
}

std::string name(char io, std::size_t index) {
  return std::string(io == 'i' ? "input " : "output ") + std::to_string(index);
}

bool expect_dtype(const KernelDesc& desc, char io, std::size_t index, DType want,
                  std::string* why_not) {
  DType got = tensor(desc, io, index).dtype;
  if (got == want) return true;
  if (why_not) {
    *why_not = name(io, index) + " is " + std::string(dtype_name(got)) + "; only " +
               std::string(dtype_name(want)) + " is supported";
  }
  return false;
}

bool expect_f32(const KernelDesc& desc, std::string* why_not) {
  for (std::size_t i = 0; i < desc.inputs.size(); ++i) {
    if (!expect_dtype(desc, 'i', i, DType::f32, why_not)) return false;
  }
  for (std::size_t i = 0; i < desc.outputs.size(); ++i) {
    if (!expect_dtype(desc, 'o', i, DType::f32, why_not)) return false;
  }
  return true;
}

void expect_shape(const KernelDesc& desc, char io, std::size_t index, const Shape& want) {
  const Shape& got = tensor(desc, io, index).shape;
  NNFIT_CHECK(got == want, InvalidArgument, desc.where(), ": ", name(io, index), " has shape ",
              got.to_string(), ", expected ", want.to_string());
}

ChannelGeometry channels_last(const KernelDesc& desc, const Shape& shape) {
  NNFIT_CHECK(shape.rank() >= 1 && shape.dim(-1) > 0, InvalidArgument, desc.where(),
              ": expected a channels-last tensor [..., C] with C > 0, got ", shape.to_string());
  return {shape.numel() / shape.dim(-1), shape.dim(-1)};
}

}  // namespace

bool check_bias_add(const KernelDesc& desc, ChannelGeometry* out, std::string* why_not) {
  expect_arity(desc, 2, 1);
  *out = channels_last(desc, desc.inputs[0].shape);
  expect_shape(desc, 'i', 1, Shape{out->channels});
  expect_shape(desc, 'o', 0, desc.inputs[0].shape);
  return expect_f32(desc, why_not);
}

bool check_bias_add_grad(const KernelDesc& desc, ChannelGeometry* out, std::string* why_not, DType data) {
  expect_arity(desc, 1, 1);
  *out = channels_last(desc, desc.inputs[0].shape);
  expect_shape(desc, 'o', 0, Shape{out->channels});
  // db in dy's type, or float32 (a cast folded into it, fuse_output_casts).
  return expect_dtype(desc, 'i', 0, data, why_not) &&
         (desc.outputs[0].dtype == DType::f32 || expect_dtype(desc, 'o', 0, data, why_not));
}

bool check_add_n(const KernelDesc& desc, std::int64_t* numel, std::string* why_not) {
  NNFIT_CHECK(!desc.inputs.empty() && desc.outputs.size() == 1, InvalidArgument, desc.where(),
              ": expected at least 1 input and 1 output, got ", desc.inputs.size(), " and ",
              desc.outputs.size());
  for (std::size_t i = 1; i < desc.inputs.size(); ++i) expect_shape(desc, 'i', i, desc.inputs[0].shape);
  expect_shape(desc, 'o', 0, desc.inputs[0].shape);
  *numel = desc.inputs[0].shape.numel();
  return expect_f32(desc, why_not);
}

bool check_reshape(const KernelDesc& desc, std::size_t* bytes, std::string* why_not) {
  expect_arity(desc, 1, 1);
  const TensorDesc& x = desc.inputs[0];
  const TensorDesc& y = desc.outputs[0];
  NNFIT_CHECK(x.dtype == y.dtype && x.shape.numel() == y.shape.numel(), InvalidArgument,
              desc.where(), ": cannot reshape ", x.shape.to_string(), " ", dtype_name(x.dtype),
              " into ", y.shape.to_string(), " ", dtype_name(y.dtype));
  if (desc.attrs.has("shape")) {
    // The attr may keep -1 for the batch dimension; every other entry must match.
    const std::vector<std::int64_t>& dims = desc.attrs.ints("shape");
    bool ok = dims.size() == static_cast<std::size_t>(y.shape.rank());
    for (std::size_t i = 0; ok && i < dims.size(); ++i) {
      ok = dims[i] < 0 || dims[i] == y.shape[static_cast<int>(i)];
    }
    NNFIT_CHECK(ok, InvalidArgument, desc.where(), ": output shape ", y.shape.to_string(),
                " does not match the shape attr ", desc.attrs.to_string());
  }
  *bytes = x.bytes();
  (void)why_not;  // reshape moves bytes, so every dtype is supported
  return true;
}

bool check_loss(const KernelDesc& desc, LossParams* out, std::string* why_not) {
  bool grad = desc.op == "loss_grad";
  const std::size_t base = grad ? 3 : 2;  // pred, target (, dloss), then an optional sample_weight
  NNFIT_CHECK(desc.inputs.size() == base || desc.inputs.size() == base + 1, InvalidArgument, desc.where(),
              ": expected ", base, " inputs (or ", base + 1, " with sample weights), got ", desc.inputs.size());
  expect_arity(desc, desc.inputs.size(), 1);
  out->weighted = desc.inputs.size() == base + 1;
  const std::string& kind = desc.attrs.s("kind");
  static const std::pair<const char*, LossKind> kKinds[] = {
      {"sparse_categorical_crossentropy", LossKind::sparse_categorical_crossentropy},
      {"categorical_crossentropy", LossKind::categorical_crossentropy},
      {"binary_crossentropy", LossKind::binary_crossentropy},
      {"mean_squared_error", LossKind::mean_squared_error},
      {"mean_absolute_error", LossKind::mean_absolute_error},
      {"mean_absolute_percentage_error", LossKind::mean_absolute_percentage_error},
      {"mean_squared_logarithmic_error", LossKind::mean_squared_logarithmic_error},
      {"huber", LossKind::huber},
      {"log_cosh", LossKind::log_cosh},
      {"poisson", LossKind::poisson},
      {"kl_divergence", LossKind::kl_divergence},
      {"hinge", LossKind::hinge},
      {"squared_hinge", LossKind::squared_hinge},
      {"categorical_hinge", LossKind::categorical_hinge},
      {"cosine_similarity", LossKind::cosine_similarity},
      {"binary_focal_crossentropy", LossKind::binary_focal_crossentropy},
      {"categorical_focal_crossentropy", LossKind::categorical_focal_crossentropy},
  };
  bool known = false;
  std::string names;
  for (const auto& [n, k] : kKinds) {
    if (kind == n) {
      out->kind = k;
      known = true;
    }
    names += (names.empty() ? "" : ", ") + std::string(n);
  }
  NNFIT_CHECK(known, InvalidArgument, desc.where(), ": unknown loss kind '", kind, "'; expected one of ", names);
  out->label_smoothing = desc.attrs.f_or("label_smoothing", 0.0);
  out->delta = desc.attrs.f_or("delta", 1.0);
  out->alpha = desc.attrs.f_or("alpha", 0.25);
  out->gamma = desc.attrs.f_or("gamma", 2.0);
  out->class_balancing = desc.attrs.i_or("apply_class_balancing", 0) != 0;
  NNFIT_CHECK(out->label_smoothing >= 0.0 && out->label_smoothing <= 1.0 && out->delta > 0.0 && out->gamma >= 0.0,
              InvalidArgument, desc.where(), ": label_smoothing must be in [0, 1], delta positive and gamma >= 0 (",
              desc.attrs.to_string(), ")");
  std::int64_t from_logits = desc.attrs.i("from_logits");
  NNFIT_CHECK(from_logits == 0 || from_logits == 1, InvalidArgument, desc.where(),
              ": from_logits must be 0 or 1, got ", from_logits);
  out->from_logits = from_logits == 1;

  const Shape& pred = desc.inputs[0].shape;
  NNFIT_CHECK(pred.rank() >= 1 && pred[0] > 0, InvalidArgument, desc.where(),
              ": pred must be [N, ...] with N > 0, got ", pred.to_string());
  out->batch = pred[0];
  out->per_sample = pred.numel() / pred[0];
  out->cols = pred.rank() >= 2 ? pred.dim(-1) : 1;
  out->rows = pred.numel() / std::max<std::int64_t>(out->cols, 1);
  bool categorical = out->kind == LossKind::sparse_categorical_crossentropy ||
                     out->kind == LossKind::categorical_crossentropy;
  if (categorical && pred.rank() != 2) {
    if (why_not) *why_not = kind + " supports pred [N, C] only, got " + pred.to_string();
    return false;
  }
  bool sparse = out->kind == LossKind::sparse_categorical_crossentropy;
  expect_shape(desc, 'i', 1, sparse ? Shape{out->batch} : pred);
  if (grad) {
    expect_shape(desc, 'i', 2, Shape{});
    expect_shape(desc, 'o', 0, pred);
  } else {
    expect_shape(desc, 'o', 0, Shape{});
  }
  if (out->weighted) expect_shape(desc, 'i', base, Shape{out->batch});
  for (std::size_t i = 0; i < desc.inputs.size(); ++i) {
    if (!expect_dtype(desc, 'i', i, i == 1 && sparse ? DType::i32 : DType::f32, why_not)) return false;
  }
  return expect_dtype(desc, 'o', 0, DType::f32, why_not);
}

bool check_batch_norm(const KernelDesc& desc, BatchNormParams* out, std::string* why_not) {
  if (desc.op == "batch_norm_train") expect_arity(desc, 3, 3);
  else if (desc.op == "batch_norm_grad" || desc.op == "batch_norm_infer_grad") expect_arity(desc, 5, 3);
  else expect_arity(desc, 5, 1);
  const Shape& x = desc.inputs[0].shape;
  out->geometry = channels_last(desc, x);
  NNFIT_CHECK(out->geometry.rows > 0, InvalidArgument, desc.where(),
              ": batch statistics need at least one row, got x ", x.to_string());
  out->epsilon = desc.attrs.f("epsilon");
  NNFIT_CHECK(out->epsilon >= 0.0, InvalidArgument, desc.where(), ": epsilon must be >= 0, got ",
              out->epsilon);
  Shape c{out->geometry.channels};
  if (desc.op == "batch_norm_train") {
    expect_shape(desc, 'i', 1, c);
    expect_shape(desc, 'i', 2, c);
    expect_shape(desc, 'o', 0, x);
    expect_shape(desc, 'o', 1, c);
    expect_shape(desc, 'o', 2, c);
  } else if (desc.op == "batch_norm_grad" || desc.op == "batch_norm_infer_grad") {
    expect_shape(desc, 'i', 1, x);
    for (std::size_t i = 2; i < 5; ++i) expect_shape(desc, 'i', i, c);
    expect_shape(desc, 'o', 0, x);
    expect_shape(desc, 'o', 1, c);
    expect_shape(desc, 'o', 2, c);
  } else {
    for (std::size_t i = 1; i < 5; ++i) expect_shape(desc, 'i', i, c);
    expect_shape(desc, 'o', 0, x);
  }
  return expect_f32(desc, why_not);
}

bool check_moving_average_update(const KernelDesc& desc, std::int64_t* channels, double* momentum,
                                 std::string* why_not) {
  expect_arity(desc, 2, 0);
  *channels = desc.inputs[0].shape.numel();
  expect_shape(desc, 'i', 1, desc.inputs[0].shape);
  *momentum = desc.attrs.f("momentum");
  return expect_f32(desc, why_not);
}

bool check_unscale_gradient(const KernelDesc& desc, std::int64_t* numel, std::string* why_not) {
  expect_arity(desc, 2, 2);
  *numel = desc.inputs[0].shape.numel();
  expect_shape(desc, 'i', 1, Shape{});
  expect_shape(desc, 'o', 0, desc.inputs[0].shape);
  expect_shape(desc, 'o', 1, Shape{});
  return expect_f32(desc, why_not);
}

bool check_accumulate_gradient(const KernelDesc& desc, std::int64_t* numel, float* weight, std::string* why_not) {
  expect_arity(desc, 3, 1);
  *numel = desc.inputs[0].shape.numel();
  expect_shape(desc, 'i', 1, Shape{});
  expect_shape(desc, 'i', 2, desc.inputs[0].shape);
  expect_shape(desc, 'o', 0, Shape{});
  const double w = desc.attrs.f("weight");
  NNFIT_CHECK(w > 0.0, InvalidArgument, desc.where(), ": weight must be positive, got ", w);
  *weight = static_cast<float>(w);
  return expect_f32(desc, why_not);
}

bool check_dropout(const KernelDesc& desc, DropoutParams* out, std::string* why_not, DType data) {
  bool grad = desc.op == "dropout_grad";
  expect_arity(desc, grad ? 2 : 1, grad ? 1 : 2);
  const Shape& x = desc.inputs[0].shape;
  out->numel = x.numel();
  double rate = desc.attrs.f("rate");
  NNFIT_CHECK(rate >= 0.0 && rate < 1.0, InvalidArgument, desc.where(),
              ": rate must be in [0, 1), got ", rate);
  out->rate = static_cast<float>(rate);
  if (grad) {
    expect_shape(desc, 'i', 1, x);
    expect_shape(desc, 'o', 0, x);
    return expect_dtype(desc, 'i', 0, data, why_not) && expect_dtype(desc, 'i', 1, DType::u8, why_not) &&
           expect_dtype(desc, 'o', 0, data, why_not);
  }
  out->seed = static_cast<std::uint64_t>(desc.attrs.i("seed"));
  if (desc.attrs.has("noise_shape")) {
    const std::vector<std::int64_t>& noise = desc.attrs.ints("noise_shape");
    NNFIT_CHECK(static_cast<std::int64_t>(noise.size()) == x.rank(), InvalidArgument, desc.where(), ": noise_shape has ",
                noise.size(), " axes, x ", x.rank());
    for (std::int64_t d = 0; d < x.rank(); ++d) {
      NNFIT_CHECK(noise[static_cast<std::size_t>(d)] == 1 || noise[static_cast<std::size_t>(d)] == x[d],
                  InvalidArgument, desc.where(), ": noise_shape axis ", d, " must be 1 or ", x[d]);
    }
    out->dims = x.dims();
    out->noise = noise;
  }
  expect_shape(desc, 'o', 0, x);
  expect_shape(desc, 'o', 1, x);
  return expect_dtype(desc, 'i', 0, data, why_not) && expect_dtype(desc, 'o', 0, data, why_not) &&
         expect_dtype(desc, 'o', 1, DType::u8, why_not);
}

bool check_optimizer(const KernelDesc& desc, OptimizerParams* out, std::string* why_not) {
  const Attrs& a = desc.attrs;
  std::size_t inputs = 2;
  if (desc.op == "sgd_momentum_update") {
    inputs = 3;
    out->momentum = a.f("momentum");
    out->nesterov = a.i_or("nesterov", 0) != 0;
  } else if (desc.op == "adam_update") {
    out->amsgrad = a.i_or("amsgrad", 0) != 0;
    inputs = out->amsgrad ? 5 : 4;
    out->beta_1 = a.f("beta_1");
    out->beta_2 = a.f("beta_2");
    out->epsilon = a.f("epsilon");
    out->weight_decay = a.f_or("weight_decay", 0.0);
  } else if (desc.op == "rmsprop_update") {
    out->rho = a.f("rho");
    out->momentum = a.f_or("momentum", 0.0);
    out->epsilon = a.f("epsilon");
    out->has_momentum_slot = out->momentum > 0.0;
    out->centered = a.i_or("centered", 0) != 0;
    inputs = 3 + (out->has_momentum_slot ? 1 : 0) + (out->centered ? 1 : 0);
    NNFIT_CHECK(desc.inputs.size() == inputs, InvalidArgument, desc.where(), ": momentum=", out->momentum,
                " centered=", out->centered, " needs ", inputs, " inputs (param, grad, velocity",
                (out->has_momentum_slot ? ", momentum" : ""), (out->centered ? ", average gradient" : ""), "), got ",
                desc.inputs.size());
  } else if (desc.op == "adagrad_update") {
    inputs = 3;
    out->epsilon = a.f("epsilon");
  } else if (desc.op == "adamax_update") {
    inputs = 4;
    out->beta_1 = a.f("beta_1");
    out->beta_2 = a.f("beta_2");
    out->epsilon = a.f("epsilon");
  } else if (desc.op == "lion_update") {
    inputs = 3;
    out->beta_1 = a.f("beta_1");
    out->beta_2 = a.f("beta_2");
  } else if (desc.op == "adadelta_update") {
    inputs = 4;
    out->rho = a.f("rho");
    out->epsilon = a.f("epsilon");
  } else if (desc.op == "nadam_update" || desc.op == "lamb_update") {
    inputs = 4;
    out->beta_1 = a.f("beta_1");
    out->beta_2 = a.f("beta_2");
    out->epsilon = a.f("epsilon");
  } else if (desc.op == "ftrl_update") {
    inputs = 4;
    out->learning_rate_power = a.f("learning_rate_power");
    out->l1 = a.f("l1");
    out->l2 = a.f("l2");
    out->l2_shrinkage = a.f("l2_shrinkage");
    out->beta = a.f("beta");
  } else if (desc.op == "schedule_free_update") {
    inputs = 4;
    out->beta_1 = a.f("beta_1");
    out->beta_2 = a.f("beta_2");
    out->epsilon = a.f("epsilon");
    out->warmup_steps = a.i_or("warmup_steps", 0);
  } else if (desc.op == "adafactor_update") {
    expect_arity(desc, 5, 0);
    out->beta_2_decay = a.f("beta_2_decay");
    out->epsilon_1 = a.f("epsilon_1");
    out->epsilon_2 = a.f("epsilon_2");
    out->clip_threshold = a.f("clip_threshold");
    const Shape& v = desc.inputs[0].shape;
    expect_shape(desc, 'i', 1, v);
    expect_shape(desc, 'i', 4, v);
    std::vector<std::int64_t> r_dims, c_dims;  // Keras's shapes: v[:-1] and v[:-2] + v[-1:]
    if (v.rank() >= 2) {
      r_dims.assign(v.dims().begin(), v.dims().end() - 1);
      c_dims.assign(v.dims().begin(), v.dims().end() - 2);
      c_dims.push_back(v.dims().back());
    }
    expect_shape(desc, 'i', 2, Shape(r_dims));
    expect_shape(desc, 'i', 3, Shape(c_dims));
    out->numel = v.numel();
    return expect_f32(desc, why_not);
  } else if (desc.op == "decay_weights") {
    inputs = 1;
    out->weight_decay = a.f("weight_decay");
  } else if (desc.op == "ema_update") {
    inputs = 2;
    out->momentum = a.f("momentum");
    out->overwrite_frequency = a.i("overwrite_frequency");
  }
  expect_arity(desc, inputs, 0);
  for (std::size_t i = 1; i < inputs; ++i) expect_shape(desc, 'i', i, desc.inputs[0].shape);
  out->numel = desc.inputs[0].shape.numel();
  return expect_f32(desc, why_not);
}

void check_sparse_labels(const KernelDesc& desc, const std::int32_t* labels, std::int64_t batch,
                         std::int64_t classes) {
  for (std::int64_t row = 0; row < batch; ++row) {
    std::int32_t y = labels[row];
    NNFIT_CHECK(y >= 0 && y < classes, InvalidArgument, desc.where(), ": label ", y, " in row ",
                row, " is outside [0, ", classes, ") for ", classes, " classes");
  }
}

}  // namespace nnfit
