// Conv1DTranspose/Conv2DTranspose/Conv3DTranspose: conv2d_backprop_input (conv3d_backprop_input
// for 3-D), the gradient of the convolution
// that maps the output (filters channels) back onto the input (C channels), with Keras's
// (k..., filters, C) kernel as that convolution's filter. The output size is Keras's
// deconv_output_length; the padding is then TensorFlow's for the forward convolution from
// that size, which is what Keras's TensorFlow backend runs (tf.nn.conv_transpose).
#include "nn/layers/conv_window.h"
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

ConvWindow window_of(const ConvTransposeOptions& o) {
  return ConvWindow{o.kernel_size, o.strides, o.dilation_rate, o.padding, 1};
}

}  // namespace

ConvTranspose::ConvTranspose(std::string name, ConvTransposeOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  NNFIT_CHECK(options_.filters > 0, InvalidArgument, this->name(), ": filters must be positive");
  window_of(options_).check(this->name(), 3);
  const std::size_t rank = options_.kernel_size.size();
  NNFIT_CHECK(options_.output_padding.empty() || options_.output_padding.size() == rank, InvalidArgument,
              this->name(), ": output_padding must have ", rank, " entries, got ", options_.output_padding.size());
  for (std::size_t i = 0; i < options_.output_padding.size(); ++i) {
    NNFIT_CHECK(options_.output_padding[i] >= 0 && options_.output_padding[i] < options_.strides[i], InvalidArgument,
                this->name(), ": output_padding ", options_.output_padding[i], " must be at least 0 and less than the stride ",
                options_.strides[i]);
  }
  check_activation(options_.activation, this->name());
}

std::string ConvTranspose::class_name() const {
  return "Conv" + std::to_string(options_.kernel_size.size()) + "DTranspose";
}

void ConvTranspose::build(const Shape& input_shape, WeightFactory& weights) {
  output_shape(input_shape);
  std::vector<std::int64_t> kernel = options_.kernel_size;
  kernel.push_back(options_.filters);
  kernel.push_back(input_shape.dim(-1));
  add_weight(weights, "kernel", Shape(kernel), options_.kernel_initializer);
  if (options_.use_bias) add_weight(weights, "bias", Shape{options_.filters}, options_.bias_initializer);
  built_ = true;
}

Shape ConvTranspose::output_shape(const Shape& s) const {
  const int rank = static_cast<int>(options_.kernel_size.size());
  NNFIT_CHECK(s.rank() == rank + 1, InvalidArgument, name(), ": ", class_name(), " expects ", rank,
              " spatial axes and a channel axis, got ", s.to_string());
  std::vector<std::int64_t> out;
  for (int i = 0; i < rank; ++i) {
    const std::int64_t in = s[i], st = options_.strides[i];
    const std::int64_t k = (options_.kernel_size[i] - 1) * options_.dilation_rate[i] + 1;
    std::int64_t len;
    if (options_.output_padding.empty()) {
      len = options_.padding == "valid" ? in * st + std::max<std::int64_t>(k - st, 0) : in * st;
    } else {
      const std::int64_t pad = options_.padding == "same" ? k / 2 : 0;
      len = (in - 1) * st + k - 2 * pad + options_.output_padding[i];
    }
    NNFIT_CHECK(len > 0, InvalidArgument, name(), ": an input of ", in, " along spatial axis ", i,
                " gives an empty output");
    out.push_back(len);
  }
  // The forward convolution from the output must land back on the input's size.
  const std::vector<std::int64_t> back = window_of(options_).out(name(), out);
  for (int i = 0; i < rank; ++i) {
    NNFIT_CHECK(back[i] == s[i], InvalidArgument, name(), ": an output of ", out[i], " along spatial axis ", i,
                " is not what a stride-", options_.strides[i], " \"", options_.padding, "\" convolution maps to ",
                s[i], "; change output_padding");
  }
  out.push_back(options_.filters);
  return Shape(out);
}

int ConvTranspose::call(GraphBuilder& b, int x) {
  Graph& g = b.graph();
  const Shape s = g.desc(x).shape;
  const ConvWindow window = window_of(options_);
  const Shape out = output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));
  std::vector<std::int64_t> full{s[0]};
  if (window.rank() == 1) full.push_back(1);
  for (std::int64_t d : out.dims()) full.push_back(d);
  Attrs a = window.attrs();
  a.set("input_shape", full);
  if (window.rank() == 3) {
    int y = g.add("conv3d_backprop_input", {x, b.variable(weights_[0])}, a, name() + "/conv_transpose");
    if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
    return emit_activation(g, y, options_.activation, name());
  }
  const int w = window.kernel_to_2d(g, b.variable(weights_[0]), name() + "/kernel_2d");
  int y = g.add("conv2d_backprop_input", {window.to_2d(g, x, name() + "/to_2d"), w}, a, name() + "/conv_transpose");
  if (options_.use_bias) y = g.add("bias_add", {y, b.variable(weights_[1])}, {}, name() + "/bias_add");
  y = emit_activation(g, y, options_.activation, name());
  return window.from_2d(g, y, name() + "/to_1d");
}

}  // namespace nnfit
