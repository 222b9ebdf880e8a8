// Keras's dtype policies (keras.mixed_precision / keras.DTypePolicy): the type a layer
// computes in and the type its variables are kept in. Under "mixed_bfloat16" and
// "mixed_float16" a layer's inputs and variables are cast to the compute type as it runs
// (Keras's autocast) while the variables, their gradients and the optimizer stay float32.
#pragma once
#include <string>

#include "nnfit/core/dtype.h"

namespace nnfit {

struct DTypePolicy {
  std::string name = "float32";  // Keras's name
  DType compute = DType::f32;
  DType variable = DType::f32;

  // "float32", "mixed_bfloat16", "mixed_float16", "bfloat16", "float16" (Keras's names).
  // throws: InvalidArgument naming the known policies; Unsupported for "float64" and the
  // quantized policies ("int8_from_float32", ...).
  static DTypePolicy from_name(const std::string& name);
  bool mixed() const { return compute != variable; }
  friend bool operator==(const DTypePolicy& a, const DTypePolicy& b) { return a.name == b.name; }
};

}  // namespace nnfit
