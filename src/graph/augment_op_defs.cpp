// Shape inference and gradient rules of the random image augmentation ops
// (docs/design/ops.md, "Image augmentation"): random_flip, random_affine (translation,
// rotation, zoom) and random_contrast, each drawing per-sample settings from the
// counter-based generator (backend/common/random.h) and outputting them, so the gradient
// op applies the adjoint of exactly the transform that was drawn; affine_transform applies
// a given transform (Keras's keras.ops.image.affine_transform). NHWC, float32.

#include "backend/common/augment.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::augment {

using Descs = std::vector<TensorDesc>;

void expect_inputs(const Descs& in, std::size_t n, const char* op, const char* what) {
  NNFIT_CHECK(in.size() == n, InvalidArgument, op, " expects ", n, " inputs (", what, "), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() == 4 && in[0].shape[1] >= 1 && in[0].shape[2] >= 1, InvalidArgument, op,
              ": expected an image of shape [N,H,W,C], got ", in[0].shape.to_string());
}

// The per-sample tensor input `i` must be [N] (or [N, 8] for transforms).
void expect_per_sample(const Descs& in, std::size_t i, std::int64_t width, const char* op, const char* what) {
  const Shape want = width == 0 ? Shape{in[0].shape[0]} : Shape{in[0].shape[0], width};
  NNFIT_CHECK(in[i].shape == want, InvalidArgument, op, ": ", what, " must be ", want.to_string(), ", got ",
              in[i].shape.to_string());
}

void check_flip_mode(const Attrs& a, const char* op) {
  bool h = false, v = false;
  NNFIT_CHECK(parse_flip_mode(a.s("mode"), &h, &v), InvalidArgument, op, ": mode \"", a.s("mode"),
              "\" is not one of ", kFlipModeNames);
}

void check_sampling(const Attrs& a, const char* op) {
  AffineFill fill;
  AffineInterpolation interpolation;
  NNFIT_CHECK(parse_affine_fill(a.s("fill_mode"), &fill), InvalidArgument, op, ": fill_mode \"", a.s("fill_mode"),
              "\" is not one of ", kAffineFillNames);
  NNFIT_CHECK(parse_affine_interpolation(a.s("interpolation"), &interpolation), InvalidArgument, op,
              ": interpolation \"", a.s("interpolation"), "\" is not one of ", kAffineInterpolationNames);
}

void check_range(const Attrs& a, const char* lower, const char* upper, const char* op) {
  NNFIT_CHECK(a.f(lower) <= a.f(upper), InvalidArgument, op, ": ", lower, " ", a.f(lower), " is above ", upper, " ",
              a.f(upper));
}

// random_flip: x -> y, flips u8 [N] (1 where sample n was flipped).
Descs infer_random_flip(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "random_flip", "x");
  check_flip_mode(a, "random_flip");
  return {in[0], {Shape{in[0].shape[0]}, DType::u8}};
}

Descs infer_random_flip_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 2, "random_flip_grad", "dy, flips");
  check_flip_mode(a, "random_flip_grad");
  expect_per_sample(in, 1, 0, "random_flip_grad", "flips");
  return {in[0]};
}

// random_affine: x -> y, transform f32 [N, 8] (Keras's 8-vector per sample).
Descs infer_random_affine(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "random_affine", "x");
  check_sampling(a, "random_affine");
  const std::string& kind = a.s("kind");
  NNFIT_CHECK(kind == "translation" || kind == "rotation" || kind == "zoom" || kind == "shear", InvalidArgument,
              "random_affine: kind must be translation, rotation, zoom or shear, got '", kind, "'");
  check_range(a, "height_lower", "height_upper", "random_affine");
  if (kind != "rotation" && a.i_or("same_zoom", 0) == 0) check_range(a, "width_lower", "width_upper", "random_affine");
  if (kind == "zoom") {
    NNFIT_CHECK(a.f("height_lower") > -1.0 && (a.i_or("same_zoom", 0) != 0 || a.f("width_lower") > -1.0),
                InvalidArgument, "random_affine: a zoom factor must be above -1 (a zoom of 1 + factor > 0)");
  }
  return {in[0], {Shape{in[0].shape[0], 8}, DType::f32}};
}

// affine_transform: x, transform [N, 8] -> y; affine_transform_grad: dy, transform -> dx.
Descs infer_affine_transform(const Descs& in, const Attrs& a) {
  expect_inputs(in, 2, "affine_transform", "x, transform");
  check_sampling(a, "affine_transform");
  expect_per_sample(in, 1, 8, "affine_transform", "transform");
  return {in[0]};
}

Descs infer_affine_transform_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 2, "affine_transform_grad", "dy, transform");
  check_sampling(a, "affine_transform_grad");
  expect_per_sample(in, 1, 8, "affine_transform_grad", "transform");
  return {in[0]};
}

// random_contrast: x -> y, factor f32 [N].
Descs infer_random_contrast(const Descs& in, const Attrs& a) {
  expect_inputs(in, 1, "random_contrast", "x");
  check_range(a, "factor_lower", "factor_upper", "random_contrast");
  check_range(a, "value_lower", "value_upper", "random_contrast");
  return {in[0], {Shape{in[0].shape[0]}, DType::f32}};
}

Descs infer_random_contrast_grad(const Descs& in, const Attrs& a) {
  expect_inputs(in, 3, "random_contrast_grad", "dy, x, factor");
  NNFIT_CHECK(in[1].shape == in[0].shape, InvalidArgument, "random_contrast_grad: x ", in[1].shape.to_string(),
              " is not dy's shape ", in[0].shape.to_string());
  expect_per_sample(in, 2, 0, "random_contrast_grad", "factor");
  check_range(a, "value_lower", "value_upper", "random_contrast_grad");
  return {in[0]};
}

Attrs sampling_attrs(const Attrs& a) {
  Attrs s;
  s.set("fill_mode", a.s("fill_mode"));
  s.set("interpolation", a.s("interpolation"));
  return s;
}

// A flip is its own adjoint: dy flipped where x was.
std::vector<int> grad_random_flip(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("mode", n.attrs.s("mode"));
  return {c.graph.add("random_flip_grad", {dy, n.outputs[1]}, a, n.name + "/grad_x")};
}

// The sampling is linear in x: its adjoint scatters dy back through the same taps.
std::vector<int> grad_random_affine(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  return {c.graph.add("affine_transform_grad", {dy, n.outputs[1]}, sampling_attrs(n.attrs), n.name + "/grad_x")};
}

// The transform is data (drawn or given), not differentiated.
std::vector<int> grad_affine_transform(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1, -1};
  return {c.graph.add("affine_transform_grad", {dy, n.inputs[1]}, sampling_attrs(n.attrs), n.name + "/grad_x"), -1};
}

std::vector<int> grad_random_contrast(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("value_lower", n.attrs.f("value_lower"));
  a.set("value_upper", n.attrs.f("value_upper"));
  return {c.graph.add("random_contrast_grad", {dy, n.inputs[0], n.outputs[1]}, a, n.name + "/grad_x")};
}

}  // namespace op_rules::augment

}  // namespace nnfit
