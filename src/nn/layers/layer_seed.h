// Private: the op seed of a random layer (Dropout, the noise layers, the augmentation
// layers) from its name and Keras seed, so layers of one model draw apart and a run repeats.
#pragma once
#include <cstdint>
#include <string>

namespace nnfit {

// FNV-1a of the name, mixed with the seed (Keras's null seed is 0).
std::int64_t layer_op_seed(const std::string& name, std::int64_t seed);

}  // namespace nnfit
