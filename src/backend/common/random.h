// Counter-based randomness shared by every dropout and noise kernel, so the reference and fast
// kernels and the CUDA kernel draw exactly the same mask for the same step: the dropout
// functions are NNFIT_HD, compiled for the device by nvcc from this very file.
#pragma once
#include <math.h>

#include <cmath>
#include <cstdint>

#include "backend/common/hd.h"

namespace nnfit {

NNFIT_HD std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The per-(run, node, step) key; hoisted out of element loops by the fast kernels.
NNFIT_HD std::uint64_t dropout_key(std::uint64_t run_seed, std::uint64_t node_seed, std::uint64_t step) {
  return splitmix64(run_seed ^ splitmix64(node_seed ^ splitmix64(step)));
}

// One splitmix64 draw serves four consecutive elements, 16 bits each (a resolution of
// 2^-16 for the dropout rate), so a kernel can hash once per group of four.
NNFIT_HD std::uint64_t dropout_bits(std::uint64_t key, std::uint64_t group) { return splitmix64(key + group); }

NNFIT_HD float dropout_lane_uniform(std::uint64_t bits, unsigned lane) {
  return static_cast<float>((bits >> (16u * lane)) & 0xffffu) * (1.0f / 65536.0f);
}

NNFIT_HD float dropout_uniform_keyed(std::uint64_t key, std::uint64_t index) {
  return dropout_lane_uniform(dropout_bits(key, index / 4), static_cast<unsigned>(index % 4));
}

// A uniform float in [0, 1) for element `index` of dropout node `node_seed` at `step`.
NNFIT_HD float dropout_uniform(std::uint64_t run_seed, std::uint64_t node_seed, std::uint64_t step,
                             std::uint64_t index) {
  return dropout_uniform_keyed(dropout_key(run_seed, node_seed, step), index);
}

// A uniform double in (0, 1] with 53 bits for element `index` of a noise node (the
// Gaussian layers need finer draws than the dropout mask's 16 bits).
NNFIT_HD double noise_uniform(std::uint64_t key, std::uint64_t index) {
  return static_cast<double>((splitmix64(key + index) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

// A standard normal draw for element `index` (Box-Muller on draws 2·index and 2·index + 1).
// ::sqrt, ::log and ::cos (math.h's, the same functions as std::'s for double) so nvcc
// compiles it for the device too.
NNFIT_HD double noise_normal(std::uint64_t key, std::uint64_t index) {
  const double u1 = noise_uniform(key, 2 * index), u2 = noise_uniform(key, 2 * index + 1);
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2);
}

// A uniform double in [0, 1) for element `index` (keras.random.uniform's interval).
NNFIT_HD double noise_uniform_half_open(std::uint64_t key, std::uint64_t index) { return 1.0 - noise_uniform(key, index); }

// A standard normal draw truncated to (-2, 2), as Keras's truncated_normal redraws a value
// beyond two standard deviations: attempt k draws with the key scrambled by k, so the
// element's numbers stay a pure function of (key, index). An element needs k attempts with
// probability 0.0455^k; after 32 (never reached in practice) it is 0.
NNFIT_HD double noise_truncated_normal(std::uint64_t key, std::uint64_t index) {
  for (std::uint64_t k = 0; k < 32; ++k) {
    const double n = noise_normal(k == 0 ? key : splitmix64(key ^ (k * 0x9E3779B97F4A7C15ull)), index);
    if (n > -2.0 && n < 2.0) return n;
  }
  return 0.0;
}

// A Gamma(alpha, 1) draw for element `index` (alpha > 0), by Marsaglia and Tsang's method
// (2000): d·v for v = (1 + c·n)^3, n standard normal, accepted when
// log u < n²/2 + d − d·v + d·log v; alpha < 1 draws Gamma(alpha + 1)·u^(1/alpha). Attempt
// k scrambles the key by k, as noise_truncated_normal, so the draw is a pure function of
// (key, index); an attempt is accepted with probability above 0.95 (after 64, d).
NNFIT_HD double noise_gamma(std::uint64_t key, std::uint64_t index, double alpha) {
  double boost = 1.0, a = alpha;
  if (alpha < 1.0) {
    boost = ::pow(noise_uniform(splitmix64(key ^ 0xA5A5A5A5A5A5A5A5ull), index), 1.0 / alpha);
    a = alpha + 1.0;
  }
  const double d = a - 1.0 / 3.0, c = 1.0 / ::sqrt(9.0 * d);
  for (std::uint64_t k = 1; k <= 64; ++k) {
    const std::uint64_t kk = splitmix64(key ^ (k * 0x9E3779B97F4A7C15ull));
    const double n = noise_normal(kk, index);
    double v = 1.0 + c * n;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = noise_uniform(splitmix64(kk ^ 0xD1B54A32D192ED03ull), index);
    if (::log(u) < 0.5 * n * n + d - d * v + d * ::log(v)) return d * v * boost;
  }
  return d * boost;
}

// Note [Random draws by global row]: every random op keys an element's (or a sample's)
// numbers by its index in the tensor, so a data-parallel rank, whose tensors hold rows
// [row_offset, row_offset + rows) of the global batch, draws the single process's numbers
// for its rows by adding the index of its first element in the global tensor. That is
// row_offset times the elements per row, for a tensor whose outermost axis is the batch
// (or a multiple of it, as [batch * time, features]); anything else (0 here) draws its
// own numbers, still random, just not one process's.
NNFIT_HD std::uint64_t random_index_offset(std::int64_t row_offset, std::int64_t rows, std::int64_t numel) {
  if (row_offset <= 0 || rows <= 0 || numel % rows != 0) return 0;
  return static_cast<std::uint64_t>(row_offset) * static_cast<std::uint64_t>(numel / rows);
}

NNFIT_HD bool dropout_keep(std::uint64_t run_seed, std::uint64_t node_seed, std::uint64_t step,
                         std::uint64_t index, float rate) {
  return dropout_uniform(run_seed, node_seed, step, index) >= rate;
}

}  // namespace nnfit
