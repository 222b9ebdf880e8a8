// oneDNN alone doing one training step's convolutions and matrix products at a model's
// shapes: the ceiling bench/fmnist_bench.py reports nnfit's step against (issue 40), as
// ../shared/bench/ceilings does by hand for two layers. For each convolution: forward
// (training, with bias), backward data (not for the first layer: its input needs no
// gradient) and backward weights (with bias); for each Dense: the same three as matmuls.
// Each primitive is timed in the plain channels-last layout nnfit's tensors use and in the
// layout oneDNN picks (`any`), and the faster counts: the ceiling is the best oneDNN does
// here, not what nnfit chose. Pooling, activations, the loss and the optimizer are left out.
//
//   nnfit_step_ceiling --dtype f32|bf16 [--conv N,H,W,C,K,KH,KW,SH,SW,PAD,FIRST]...
//                      [--gemm M,K,N,FIRST]...        (PAD: 0 valid, 1 same; FIRST: 0/1)
//                      [--layouts best|nhwc|any]      (convolutions' activations; default best)
//
// Prints one JSON object: per primitive its milliseconds and oneDNN's implementation, and
// total_ms, the sum (cmake --build build/release --target nnfit_step_ceiling).
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

namespace {

struct Timed {
  std::string what, impl;
  double ms;
};

std::vector<Timed> g_timed;
// The activation layouts tried per convolution: --layouts best (both, the faster counts),
// nhwc (the plain layout nnfit's tensors use) or any (oneDNN's own, blocked).
std::vector<tag> g_layouts{tag::nhwc, tag::any};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Median of 5 rounds of 10 executions, after 3 untimed ones (first touch, caches).
double time_ms(primitive& p, stream& s, const std::unordered_map<int, memory>& args) {
  for (int i = 0; i < 3; ++i) p.execute(s, args);
  s.wait();
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const double t0 = now();
    for (int i = 0; i < 10; ++i) p.execute(s, args);
    s.wait();
    rounds.push_back((now() - t0) / 10 * 1e3);
  }
  std::nth_element(rounds.begin(), rounds.begin() + 2, rounds.end());
  return rounds[2];
}

// Memory for a primitive's argument, holding ordinary values (0.01 .. 0.12; a byte pattern
// would make denormals, which run many times slower and would distort the timing).
memory filled(const memory::desc& d, engine& eng) {
  memory m(d, eng);
  if (d.data_type() == dt::bf16) {
    auto* p = static_cast<std::uint16_t*>(m.get_data_handle());
    for (std::size_t i = 0; i < d.get_size() / 2; ++i) {
      const float v = 0.01f * static_cast<float>(1 + i % 12);
      std::uint32_t bits;
      std::memcpy(&bits, &v, 4);
      p[i] = static_cast<std::uint16_t>(bits >> 16);
    }
  } else {
    auto* p = static_cast<float*>(m.get_data_handle());
    for (std::size_t i = 0; i < d.get_size() / 4; ++i) p[i] = 0.01f * static_cast<float>(1 + i % 12);
  }
  return m;
}

void conv(engine& eng, stream& s, dt d, const std::vector<long>& a) {
  const long N = a[0], H = a[1], W = a[2], C = a[3], K = a[4], KH = a[5], KW = a[6], SH = a[7], SW = a[8];
  const bool same = a[9] != 0, first = a[10] != 0;
  const long OH = same ? (H + SH - 1) / SH : (H - KH) / SH + 1, OW = same ? (W + SW - 1) / SW : (W - KW) / SW + 1;
  const long PH = same ? std::max(0L, ((OH - 1) * SH + KH - H)) : 0, PW = same ? std::max(0L, ((OW - 1) * SW + KW - W)) : 0;
  memory::dims src{N, C, H, W}, wei{K, C, KH, KW}, dst{N, K, OH, OW}, str{SH, SW}, pl{PH / 2, PW / 2},
      pr{PH - PH / 2, PW - PW / 2};
  std::ostringstream name;
  name << "conv " << H << "x" << W << "x" << C << "->" << K << " " << KH << "x" << KW;
  const memory::desc bias({K}, dt::f32, tag::a);
  double best[3] = {1e30, 1e30, 1e30};
  std::string impl[3];
  for (tag layout : g_layouts) {
    const memory::desc sd(src, d, layout), dd(dst, d, layout), wd(wei, d, tag::any);
    convolution_forward::primitive_desc fpd(
        {prop_kind::forward_training, algorithm::convolution_direct, sd, wd, bias, dd, str, pl, pr}, eng);
    // Each backward primitive picks its own layouts (`any`) where the forward's were given:
    // handed the forward's blocked weights, oneDNN 2.6 finds no JIT backward-data kernel
    // and falls back to its reference one, a thousand times slower. The reorders between
    // layouts are not counted (a framework keeps each tensor in the layout its users want).
    convolution_backward_weights::primitive_desc wpd(
        {algorithm::convolution_direct, sd, memory::desc(wei, dt::f32, tag::any), bias, dd, str, pl, pr}, eng, fpd);
    memory S = filled(fpd.src_desc(), eng), Wt = filled(fpd.weights_desc(), eng), B = filled(bias, eng),
           D = filled(fpd.dst_desc(), eng), dW = filled(wpd.diff_weights_desc(), eng), dB = filled(bias, eng);
    memory Sw = filled(wpd.src_desc(), eng), Dw = filled(wpd.diff_dst_desc(), eng);
    convolution_forward f(fpd);
    convolution_backward_weights bw(wpd);
    const double tf = time_ms(f, s, {{DNNL_ARG_SRC, S}, {DNNL_ARG_WEIGHTS, Wt}, {DNNL_ARG_BIAS, B}, {DNNL_ARG_DST, D}});
    const double tw = time_ms(bw, s, {{DNNL_ARG_SRC, Sw}, {DNNL_ARG_DIFF_DST, Dw}, {DNNL_ARG_DIFF_WEIGHTS, dW},
                                      {DNNL_ARG_DIFF_BIAS, dB}});
    const std::string in = layout == tag::nhwc ? " (nhwc)" : " (any)";
    if (tf < best[0]) best[0] = tf, impl[0] = fpd.impl_info_str() + in;
    if (tw < best[2]) best[2] = tw, impl[2] = wpd.impl_info_str() + in;
    if (!first) {
      convolution_backward_data::primitive_desc dpd({algorithm::convolution_direct, sd, wd, dd, str, pl, pr}, eng, fpd);
      memory dS = filled(dpd.diff_src_desc(), eng), Wd = filled(dpd.weights_desc(), eng),
             Dd = filled(dpd.diff_dst_desc(), eng);
      convolution_backward_data bd(dpd);
      const double td = time_ms(bd, s, {{DNNL_ARG_DIFF_DST, Dd}, {DNNL_ARG_WEIGHTS, Wd}, {DNNL_ARG_DIFF_SRC, dS}});
      if (td < best[1]) best[1] = td, impl[1] = dpd.impl_info_str() + in;
    }
  }
  g_timed.push_back({name.str() + " forward", impl[0], best[0]});
  if (!first) g_timed.push_back({name.str() + " backward data", impl[1], best[1]});
  g_timed.push_back({name.str() + " backward weights", impl[2], best[2]});
}

// One matmul (M x K) . (K x N) with the given layouts of its operands, best of plain and `any`
// weights where oneDNN allows it.
void matmul_timed(engine& eng, stream& s, const std::string& what, long M, long K, long N, dt in, dt out, tag a_tag,
                  tag b_tag, bool bias) {
  double best = 1e30;
  std::string impl;
  for (tag wt : {b_tag, tag::any}) {
    const memory::desc ad({M, K}, in, a_tag), bd({K, N}, in, wt), cd({M, N}, out, tag::ab);
    const memory::desc biasd = bias ? memory::desc({1, N}, dt::f32, tag::ab) : memory::desc();
    matmul::primitive_desc pd;
    try {
      pd = matmul::primitive_desc(matmul::desc(ad, bd, biasd, cd), eng);
    } catch (const error&) {
      continue;  // `any` weights are not offered by every implementation
    }
    memory A = filled(pd.src_desc(), eng), Bm = filled(pd.weights_desc(), eng), Cm = filled(pd.dst_desc(), eng);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, Bm}, {DNNL_ARG_DST, Cm}};
    if (bias) args[DNNL_ARG_BIAS] = filled(biasd, eng);
    matmul m(pd);
    const double t = time_ms(m, s, args);
    if (t < best) best = t, impl = pd.impl_info_str();
  }
  g_timed.push_back({what, impl, best});
}

void gemm(engine& eng, stream& s, dt d, const std::vector<long>& a) {
  const long M = a[0], K = a[1], N = a[2];
  const bool first = a[3] != 0;
  std::ostringstream name;
  name << "dense " << K << "->" << N;
  matmul_timed(eng, s, name.str() + " forward", M, K, N, d, d, tag::ab, tag::ab, true);
  if (!first) matmul_timed(eng, s, name.str() + " backward data", M, N, K, d, d, tag::ab, tag::ba, false);
  // The weights' gradient in float32 (mixed precision keeps float32 weights): X^T . dY.
  matmul_timed(eng, s, name.str() + " backward weights", K, M, N, d, dt::f32, tag::ba, tag::ab, false);
}

std::vector<long> numbers(const char* text, std::size_t want, const char* flag) {
  std::vector<long> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atol(item.c_str()));
  if (out.size() != want) {
    std::fprintf(stderr, "nnfit_step_ceiling: %s takes %zu comma-separated numbers, got '%s'\n", flag, want, text);
    std::exit(2);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  dt d = dt::f32;
  std::vector<std::pair<char, std::vector<long>>> layers;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "nnfit_step_ceiling: %s needs a value\n", arg.c_str());
      return 2;
    }
    const char* value = argv[++i];
    if (arg == "--dtype") {
      if (std::string(value) != "f32" && std::string(value) != "bf16") {
        std::fprintf(stderr, "nnfit_step_ceiling: --dtype takes f32 or bf16, got '%s'\n", value);
        return 2;
      }
      d = std::string(value) == "bf16" ? dt::bf16 : dt::f32;
    } else if (arg == "--conv") {
      layers.push_back({'c', numbers(value, 11, "--conv")});
    } else if (arg == "--gemm") {
      layers.push_back({'g', numbers(value, 4, "--gemm")});
    } else if (arg == "--layouts") {
      const std::string v = value;
      if (v != "best" && v != "nhwc" && v != "any") {
        std::fprintf(stderr, "nnfit_step_ceiling: --layouts takes best, nhwc or any, got '%s'\n", value);
        return 2;
      }
      g_layouts = v == "best" ? std::vector<tag>{tag::nhwc, tag::any} : std::vector<tag>{v == "nhwc" ? tag::nhwc : tag::any};
    } else {
      std::fprintf(stderr, "nnfit_step_ceiling: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  try {
    for (const auto& [kind, a] : layers) kind == 'c' ? conv(eng, s, d, a) : gemm(eng, s, d, a);
  } catch (const error& e) {
    std::fprintf(stderr, "nnfit_step_ceiling: oneDNN: %s (status %d)\n", e.what(), static_cast<int>(e.status));
    return 1;
  }
  double total = 0;
  std::printf("{\"dtype\": \"%s\", \"ops\": [", d == dt::bf16 ? "bf16" : "f32");
  for (std::size_t i = 0; i < g_timed.size(); ++i) {
    total += g_timed[i].ms;
    std::printf("%s{\"what\": \"%s\", \"impl\": \"%s\", \"ms\": %.5f}", i ? ", " : "", g_timed[i].what.c_str(),
                g_timed[i].impl.c_str(), g_timed[i].ms);
  }
  std::printf("], \"total_ms\": %.5f}\n", total);
  return 0;
}
