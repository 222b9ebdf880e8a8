// Helpers the dataset transformations share: stacking and slicing elements, scalars,
// seeded bounded draws, thread counts for AUTOTUNE. Private to the data module.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "nnfit/data/dataset.h"

namespace nnfit::data::detail {

// A fresh host tensor [parts.size(), ...] holding the parts in order.
// throws: InvalidArgument naming `who`, the component and both shapes if the parts differ
//   in shape or dtype.
Tensor stack(const std::vector<Tensor>& parts, const std::string& who, std::size_t component);
// Row i of t as a view of rank rank-1.
Tensor row(const Tensor& t, std::int64_t i);
Tensor scalar_i64(std::int64_t value);
// Sets every element of t (host) to value converted to t's dtype.
void fill(const Tensor& t, double value);
// Uniform in [0, bound) without modulo bias; bound > 0 (std distributions are
// implementation-defined, and seeded runs must repeat across platforms).
std::uint64_t bounded(std::mt19937_64& rng, std::uint64_t bound);
// Threads for num_parallel_calls = kAutotune until the Autotuner lands: one per core.
int autotune_threads();
// Called first thing on every pipeline thread (prefetch producers, map workers): names it
// for traces and gives it the pipeline's scheduling policy (Note [Pipeline thread policy]
// in element_util.cpp).
void start_pipeline_thread(const std::string& name);
// spec with the first dimension of every component removed / with `dim` prepended.
ElementSpec unbatched(const ElementSpec& spec, const std::string& who);
ElementSpec batched(const ElementSpec& spec, std::int64_t dim);
// Where two specs differ in a dimension, -1. throws: InvalidArgument if dtypes or ranks differ.
ElementSpec merge(const ElementSpec& a, const ElementSpec& b, const std::string& who);
ElementSpec spec_of(const Element& element);

}  // namespace nnfit::data::detail
