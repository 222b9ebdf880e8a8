// keras.random.normal, uniform and truncated_normal inside a traced call, as operations of
// the traced graph (listed with Keras's operations in operation_emitters.cpp).
//
// Note [Random draws in traced calls]: Keras runs a layer's call every step, so
// keras.random.normal(shape, seed=self.seed_generator) in it draws new numbers each step;
// nnfit traces the call once, so a draw made while tracing would repeat in every step. A draw
// in a traced call is therefore recorded as a node of nnfit's own (module
// keras.src.random.random, where Keras's functions live; class RandomNormal, RandomUniform or
// RandomTruncatedNormal; Keras writes no such node, since it never traces these calls; the
// node lives only in nnfit's trace) over a tensor of the draw's shape holding its offset
// (mean, or minval; its batch axis taken from the traced call's input), and emitted as the
// engine's noise op: y = offset + scale·draw, the draw keyed by (run seed, node seed, step,
// element), so every step draws anew and a run repeats under one seed. The node seed comes
// from the SeedGenerator's state (or the integer seed) when traced. The numbers are not
// TensorFlow's (keras.random's eager draws are not either), their distributions are Keras's.
#include "nn/layers/operation_emit.h"

namespace nnfit::operation_emit {

std::vector<int> random_draw(const Emit& e) {
  const std::string& cls = e.op.class_name();
  const std::string kind = cls == "RandomNormal"      ? "gaussian_add"
                           : cls == "RandomUniform"   ? "uniform_add"
                           : cls == "RandomTruncatedNormal" ? "truncated_normal_add"
                                                            : "";
  if (kind.empty()) e.unsupported("not a random draw nnfit knows");
  const double scale = e.config().has("scale") ? e.config().f("scale") : 1.0;
  if (!(scale >= 0.0)) e.invalid("the draw's scale (stddev, or maxval - minval) must not be negative");
  Attrs a;
  a.set("kind", kind);
  a.set("value", scale);
  a.set("seed", e.config().has("seed") ? e.config().i("seed") : std::int64_t{0});
  return {e.g.add_node("noise", {e.value(0)}, a, e.node("draw"))[0]};
}

}  // namespace nnfit::operation_emit
