// Keras's dtype policy names (keras/src/dtype_policies/dtype_policy.py).
#include "nnfit/nn/dtype_policy.h"

#include "nnfit/core/error.h"

namespace nnfit {

DTypePolicy DTypePolicy::from_name(const std::string& name) {
  DTypePolicy p;
  p.name = name;
  if (name == "float32") return p;
  if (name == "mixed_bfloat16" || name == "mixed_float16") {
    p.compute = name == "mixed_bfloat16" ? DType::bf16 : DType::f16;
    return p;
  }
  // Keras keeps the variables of the "bfloat16" / "float16" policies in that type too; nnfit
  // keeps float32 master copies (docs/config.md, "Dtype policies").
  if (name == "bfloat16" || name == "float16") {
    p.compute = p.variable = name == "bfloat16" ? DType::bf16 : DType::f16;
    return p;
  }
  if (name == "float64" || name == "mixed_float64") {
    throw Unsupported("dtype policy \"" + name + "\": nnfit computes in float32, float16 and bfloat16",
                      "use float32");
  }
  if (name.find("int8") != std::string::npos || name.find("int4") != std::string::npos ||
      name.find("float8") != std::string::npos) {
    throw Unsupported("dtype policy \"" + name + "\": quantized policies are not supported", "use float32");
  }
  throw InvalidArgument("unknown dtype policy \"" + name +
                        "\"; Keras's are float32, mixed_bfloat16, mixed_float16, bfloat16 and float16");
}

}  // namespace nnfit
