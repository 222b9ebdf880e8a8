// Shape inference and gradient rules of the image resizing ops (docs/design/ops.md):
// resize (NHWC, TensorFlow's tf.image.resize for each method Keras 3 names) and
// resize_grad, its adjoint. Keras's Resizing, CenterCrop (on a smaller input) and
// UpSampling2D with an interpolation other than nearest are made of them. The sampling
// itself is backend/common/resize_taps.h, which the kernels share.

#include "backend/common/resize_taps.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/graph.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace op_rules::resize {

using Descs = std::vector<TensorDesc>;

void check_method(const Attrs& a, const char* op) {
  ResizeInterpolation m;
  const std::string method = a.s("method");
  NNFIT_CHECK(parse_resize_method(method, &m), InvalidArgument, op, ": method \"", method, "\" is not one of ",
              kResizeMethodNames);
  const std::int64_t antialias = a.i_or("antialias", 0);
  NNFIT_CHECK(antialias == 0 || antialias == 1, InvalidArgument, op, ": antialias must be 0 or 1, got ", antialias);
}

void expect_image(const Descs& in, const char* op, const char* what) {
  NNFIT_CHECK(in.size() == 1, InvalidArgument, op, " expects 1 input (", what, "), got ", in.size());
  NNFIT_CHECK(in[0].shape.rank() == 4 && in[0].shape[1] >= 1 && in[0].shape[2] >= 1, InvalidArgument, op,
              ": expected ", what, " of shape [N,H,W,C] with H, W >= 1, got ", in[0].shape.to_string());
}

// x [N,H,W,C] -> y [N,OH,OW,C], size = [OH, OW].
Descs infer_resize(const Descs& in, const Attrs& a) {
  expect_image(in, "resize", "x");
  check_method(a, "resize");
  const std::vector<std::int64_t> size = a.ints("size");
  NNFIT_CHECK(size.size() == 2 && size[0] >= 1 && size[1] >= 1, InvalidArgument,
              "resize: size must be two integers >= 1 (height, width), got ", size.size(), " entries");
  const Shape& x = in[0].shape;
  return {{Shape{x[0], size[0], size[1], x[3]}, DType::f32}};
}

// dy [N,OH,OW,C] -> dx of input_shape [N,H,W,C].
Descs infer_resize_grad(const Descs& in, const Attrs& a) {
  expect_image(in, "resize_grad", "dy");
  check_method(a, "resize_grad");
  const Shape x(a.ints("input_shape"));
  const Shape& dy = in[0].shape;
  NNFIT_CHECK(x.rank() == 4 && x[0] == dy[0] && x[3] == dy[3] && x[1] >= 1 && x[2] >= 1, InvalidArgument,
              "resize_grad: input_shape ", x.to_string(), " does not fit dy ", dy.to_string(),
              " (same batch and channels, non-empty spatial axes)");
  return {{x, DType::f32}};
}

std::vector<int> grad_resize(GradContext& c) {
  const Node n = c.graph.node(c.node);
  const int dy = c.output_grads[0];
  if (dy < 0 || !c.needs[0]) return {-1};
  Attrs a;
  a.set("method", n.attrs.s("method"));
  a.set("antialias", n.attrs.i_or("antialias", 0));
  a.set("input_shape", c.graph.desc(n.inputs[0]).shape.dims());
  return {c.graph.add("resize_grad", {dy}, a, n.name + "/grad_x")};
}

}  // namespace op_rules::resize

}  // namespace nnfit
