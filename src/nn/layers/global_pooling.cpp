// GlobalPooling (GlobalAveragePooling1D/2D/3D, GlobalMaxPooling1D/2D/3D): reduce_mean or
// reduce_max over the spatial axes; a masked GlobalAveragePooling1D averages the present
// steps only (masked_mean), as Keras's does.
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/nn/layers.h"

namespace nnfit {

GlobalPooling::GlobalPooling(std::string name, GlobalPoolingOptions options)
    : Layer(std::move(name)), options_(options) {
  NNFIT_CHECK(options_.rank >= 1 && options_.rank <= 3, InvalidArgument, this->name(),
              ": global pooling has 1, 2 or 3 spatial axes, got ", options_.rank);
}

std::string GlobalPooling::class_name() const {
  return std::string(options_.kind == PoolKind::max ? "GlobalMaxPooling" : "GlobalAveragePooling") +
         std::to_string(options_.rank) + "D";
}

Shape GlobalPooling::output_shape(const Shape& s) const {
  NNFIT_CHECK(s.rank() == options_.rank + 1, InvalidArgument, name(), ": ", class_name(), " expects ",
              options_.rank, " spatial axes and a channel axis, got ", s.to_string());
  const std::int64_t channels = options_.channels_first ? s[0] : s[s.rank() - 1];
  if (!options_.keepdims) return Shape{channels};
  std::vector<std::int64_t> dims(static_cast<std::size_t>(options_.rank), 1);
  dims.insert(options_.channels_first ? dims.begin() : dims.end(), channels);
  return Shape(dims);
}

int GlobalPooling::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;
  output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));  // checks the rank
  std::vector<std::int64_t> axes;
  const std::int64_t first = options_.channels_first ? 2 : 1;
  for (std::int64_t a = first; a < first + options_.rank; ++a) axes.push_back(a);
  Attrs a;
  a.set("axes", axes);
  a.set("keepdims", std::int64_t{options_.keepdims});
  const std::string op = options_.kind == PoolKind::max ? "reduce_max" : "reduce_mean";
  return b.graph().add(op, {x}, a, name() + "/" + op);
}

std::vector<int> GlobalPooling::call_masked(GraphBuilder& b, const std::vector<int>& inputs,
                                            const std::vector<int>& masks, std::vector<int>& output_masks) {
  output_masks = {-1};
  const int mask = masks.empty() ? -1 : masks[0];
  if (mask < 0 || options_.kind == PoolKind::max || options_.rank != 1) return {call(b, inputs.at(0))};
  NNFIT_CHECK(!options_.channels_first, Unsupported, name(),
              ": a masked GlobalAveragePooling1D over channels_first data is not supported");
  Graph& g = b.graph();
  int y = g.add("masked_mean", {inputs.at(0), mask}, {}, name() + "/masked_mean");
  if (options_.keepdims) {
    const Shape& s = g.desc(y).shape;
    y = emit_reshape(g, y, {s[0], 1, s[1]}, name() + "/keepdims");
  }
  return {y};
}

}  // namespace nnfit
