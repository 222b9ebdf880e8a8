// Private to src/nn/layers: the vocabulary shared by the emitters of keras.ops.nn
// (operation_nn_emitters.cpp: convolutions, poolings, attention; operation_nn_math_emitters.cpp:
// normalizations, losses, encodings), over operation_emit.h's Emit.
#pragma once
#include <map>
#include <string>

#include "nn/layers/operation_emit.h"
#include "nnfit/nn/layer.h"

namespace nnfit::operation_emit {

inline bool is_none(const Emit& e, std::size_t k) {
  return k >= e.args.size() || e.args[k].kind == OperationArg::Kind::none;
}

// A config entry Keras writes as an int or a list of `n` ints (absent or null: fallback).
inline Dims per_axis(const Emit& e, const char* key, std::size_t n, const Dims& fallback) {
  const auto& items = e.config().items();
  auto it = items.find(key);
  if (it == items.end()) return fallback;
  if (const auto* one = std::get_if<std::int64_t>(&it->second)) return Dims(n, *one);
  if (const auto* many = std::get_if<Dims>(&it->second)) {
    if (many->size() != n) {
      e.invalid(std::string("\"") + key + "\" must have " + std::to_string(n) + " entries (one per spatial axis), got " +
                std::to_string(many->size()));
    }
    return *many;
  }
  e.invalid(std::string("\"") + key + "\" must be an integer or a list of integers");
}

inline bool channels_first(const Emit& e) {
  const std::string f = e.config().s_or("data_format", "channels_last");
  if (f != "channels_last" && f != "channels_first") {
    e.invalid("data_format must be \"channels_last\" or \"channels_first\", got \"" + f + "\"");
  }
  return f == "channels_first";
}

inline int transpose_to(const Emit& e, int x, const Dims& perm) { return e.add("transpose", {x}, Attrs{{"perm", perm}}, "transpose"); }

// (batch, channels, spatial...) <-> (batch, spatial..., channels).
inline int to_channels_last(const Emit& e, int x) {
  Dims perm{0};
  for (int i = 2; i < e.rank(x); ++i) perm.push_back(i);
  perm.push_back(1);
  return transpose_to(e, x, perm);
}
inline int to_channels_first(const Emit& e, int y) {
  const int r = e.rank(y);
  Dims perm{0, r - 1};
  for (int i = 1; i < r - 1; ++i) perm.push_back(i);
  return transpose_to(e, y, perm);
}

// Runs f on x channels-last and gives the result in the call's data_format.
template <class F>
inline int channels_last_run(const Emit& e, int x, F f) {
  const bool cf = channels_first(e);
  const int y = f(cf ? to_channels_last(e, x) : x);
  return cf ? to_channels_first(e, y) : y;
}

inline int reduce_on(const Emit& e, int x, const std::string& kind, const Dims& axes, bool keepdims) {
  return e.add("reduce", {x}, Attrs{{"axes", axes}, {"keepdims", std::int64_t{keepdims ? 1 : 0}}, {"kind", kind}}, kind);
}
inline int affine(const Emit& e, int x, double factor, double offset, const std::string& what) {
  return e.add("scale", {x}, Attrs{{"factor", factor}, {"offset", offset}}, what);
}
// A tensor of x's shape holding v (x itself must be finite: it is multiplied by 0).
inline int fill_like(const Emit& e, int x, double v) { return affine(e, x, 0.0, v, "fill"); }

inline Dims spatial_of(const Shape& s) { return Dims(s.dims().begin() + 1, s.dims().end() - 1); }

// The table entries of operation_nn_math_emitters.cpp (called by add_nn_emitters).
void add_nn_math_emitters(std::map<std::string, Emitter>& table);

}  // namespace nnfit::operation_emit
