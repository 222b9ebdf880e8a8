// AdaptivePooling (AdaptiveAveragePooling1D/2D/3D, AdaptiveMaxPooling1D/2D/3D): Keras's layer
// calls keras.ops.adaptive_average_pool / adaptive_max_pool, so this layer emits that
// operation's call (the AdaptiveAveragePool / AdaptiveMaxPool emitter: crops reduced with
// keepdims and concatenated, one spatial axis after the other) and the two cannot drift.
#include "nnfit/core/error.h"
#include "nnfit/nn/layers.h"
#include "nnfit/nn/operation.h"

namespace nnfit {

AdaptivePooling::AdaptivePooling(std::string name, AdaptivePoolingOptions options)
    : Layer(std::move(name)), options_(std::move(options)) {
  const std::size_t n = options_.output_size.size();
  NNFIT_CHECK(n >= 1 && n <= 3, InvalidArgument, this->name(), ": adaptive pooling has 1, 2 or 3 spatial axes, got ",
              n, " output_size entries");
  for (const std::int64_t o : options_.output_size) {
    NNFIT_CHECK(o > 0, InvalidArgument, this->name(), ": output_size entries must be positive, got ", o);
  }
}

std::string AdaptivePooling::class_name() const {
  return std::string(options_.kind == PoolKind::max ? "AdaptiveMaxPooling" : "AdaptiveAveragePooling") +
         std::to_string(options_.output_size.size()) + "D";
}

Shape AdaptivePooling::output_shape(const Shape& s) const {
  const int rank = static_cast<int>(options_.output_size.size());
  NNFIT_CHECK(s.rank() == rank + 1, InvalidArgument, name(), ": ", class_name(), " expects ", rank,
              " spatial axes and a channel axis, got ", s.to_string());
  std::vector<std::int64_t> dims = options_.output_size;
  const std::int64_t channels = options_.channels_first ? s[0] : s[rank];
  dims.insert(options_.channels_first ? dims.begin() : dims.end(), channels);
  return Shape(dims);
}

int AdaptivePooling::call(GraphBuilder& b, int x) {
  const Shape s = b.graph().desc(x).shape;
  output_shape(Shape(std::vector<std::int64_t>(s.dims().begin() + 1, s.dims().end())));  // checks the rank
  Attrs config;
  config.set("output_size", options_.output_size);
  config.set("data_format", std::string(options_.channels_first ? "channels_first" : "channels_last"));
  Operation op(name(), "keras.src.ops.nn", options_.kind == PoolKind::max ? "AdaptiveMaxPool" : "AdaptiveAveragePool",
               config, "{}");
  CallArguments args;
  OperationArg input;
  input.tensors = {0};
  args.operation_args = {input};
  op.set_call_arguments(args);
  const Operation::ConstantFn none = [&](const std::string& key) -> int {
    throw InvalidArgument(name() + ": adaptive pooling reads no constant (asked for \"" + key + "\")");
  };
  return op.emit(b.graph(), {x}, none).at(0);
}

}  // namespace nnfit
