// Pooling3D (MaxPooling3D, AveragePooling3D) on NDHWC: the max_pool3d / avg_pool3d ops;
// strides default to the pool size as in Keras.
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

bool three_positive(const std::vector<std::int64_t>& v) {
  return v.size() == 3 && v[0] > 0 && v[1] > 0 && v[2] > 0;
}

}  // namespace

Pooling3D::Pooling3D(std::string name, Pooling3DOptions options) : Layer(std::move(name)), options_(std::move(options)) {
  if (options_.strides.empty()) options_.strides = options_.pool_size;
  NNFIT_CHECK(three_positive(options_.pool_size), InvalidArgument, this->name(),
              ": pool_size must be three positive integers (depth, height, width)");
  NNFIT_CHECK(three_positive(options_.strides), InvalidArgument, this->name(),
              ": strides must be three positive integers (depth, height, width)");
  NNFIT_CHECK(options_.padding == "valid" || options_.padding == "same", InvalidArgument, this->name(),
              ": padding must be \"valid\" or \"same\", got \"", options_.padding, "\"");
}

std::string Pooling3D::class_name() const {
  return options_.kind == PoolKind::max ? "MaxPooling3D" : "AveragePooling3D";
}

Shape Pooling3D::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == 4, InvalidArgument, name(), ": ", class_name(),
              " expects (depth, height, width, channels), got ", s.to_string());
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < 3; ++i) {
    const Padding1d p = tf_padding(s[static_cast<int>(i)], options_.pool_size[i], options_.strides[i],
                                   options_.padding);
    NNFIT_CHECK(p.out > 0, InvalidArgument, name(), ": pool ", options_.pool_size[0], "x", options_.pool_size[1], "x",
                options_.pool_size[2], " does not fit input ", s.to_string(), " with padding \"", options_.padding,
                "\"");
    out.push_back(p.out);
  }
  out.push_back(s[3]);
  return Shape(out);
}

int Pooling3D::call(GraphBuilder& b, int x) {
  Attrs a;
  a.set("pool_size", options_.pool_size);
  a.set("strides", options_.strides);
  a.set("padding", options_.padding);
  const std::string op = options_.kind == PoolKind::max ? "max_pool3d" : "avg_pool3d";
  return b.graph().add(op, {x}, a, name() + "/" + op);
}

}  // namespace nnfit
