// MaxPooling2D and AveragePooling2D (NHWC); strides default to the pool size as in Keras.
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

namespace {

Pooling2DOptions normalized(Pooling2DOptions o, const std::string& name) {
  if (o.strides.empty()) o.strides = o.pool_size;
  NNFIT_CHECK(o.pool_size.size() == 2 && o.pool_size[0] > 0 && o.pool_size[1] > 0, InvalidArgument, name,
              ": pool_size must be two positive integers");
  NNFIT_CHECK(o.strides.size() == 2 && o.strides[0] > 0 && o.strides[1] > 0, InvalidArgument, name,
              ": strides must be two positive integers");
  NNFIT_CHECK(o.padding == "valid" || o.padding == "same", InvalidArgument, name,
              ": padding must be \"valid\" or \"same\", got \"", o.padding, "\"");
  return o;
}

Shape pooled(const Shape& s, const Pooling2DOptions& o, const std::string& name) {
  NNFIT_CHECK(s.rank() == 3, InvalidArgument, name, ": pooling expects (height, width, channels), got ", s.to_string());
  std::int64_t out[2];
  for (int i = 0; i < 2; ++i) {  // an unknown size pools to an unknown size (Note [Shapes known per batch])
    out[i] = s[i] < 0 ? kUnknownDim
                      : tf_padding(s[i], o.pool_size[static_cast<std::size_t>(i)], o.strides[static_cast<std::size_t>(i)],
                                   o.padding).out;
    NNFIT_CHECK(s[i] < 0 || out[i] > 0, InvalidArgument, name, ": pool ", o.pool_size[0], "x", o.pool_size[1],
                " does not fit input ", s.to_string());
  }
  return Shape{out[0], out[1], s[2]};
}

int emit_pool(GraphBuilder& b, int x, const Pooling2DOptions& o, const std::string& op, const std::string& name) {
  Attrs a;
  a.set("pool_size", o.pool_size);
  a.set("strides", o.strides);
  a.set("padding", o.padding);
  return b.graph().add(op, {x}, a, name + "/" + op);
}

}  // namespace

MaxPooling2D::MaxPooling2D(std::string name, Pooling2DOptions options)
    : Layer(std::move(name)), options_(normalized(std::move(options), this->name())) {}

Shape MaxPooling2D::output_shape(const Shape& s) const { return pooled(s, options_, name()); }

int MaxPooling2D::call(GraphBuilder& b, int x) { return emit_pool(b, x, options_, "max_pool2d", name()); }

AveragePooling2D::AveragePooling2D(std::string name, Pooling2DOptions options)
    : Layer(std::move(name)), options_(normalized(std::move(options), this->name())) {}

Shape AveragePooling2D::output_shape(const Shape& s) const { return pooled(s, options_, name()); }

int AveragePooling2D::call(GraphBuilder& b, int x) { return emit_pool(b, x, options_, "avg_pool2d", name()); }

}  // namespace nnfit
