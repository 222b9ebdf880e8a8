#include "nn/layers/conv_window.h"

#include "nnfit/nn/layer.h"

#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"

namespace nnfit {

namespace {

bool positive(const std::vector<std::int64_t>& v, std::size_t n) {
  if (v.size() != n) return false;
  for (std::int64_t x : v) {
    if (x <= 0) return false;
  }
  return true;
}

}  // namespace

void ConvWindow::check(const std::string& layer, int max_rank) const {
  NNFIT_CHECK(rank() >= 1 && rank() <= max_rank, InvalidArgument, layer, ": kernel_size must have ",
              max_rank == 2 ? std::string("1 or 2") : "1 to " + std::to_string(max_rank), " entries, got ",
              kernel.size());
  const std::size_t n = kernel.size();
  NNFIT_CHECK(positive(kernel, n), InvalidArgument, layer, ": kernel_size must be ", n, " positive integers");
  NNFIT_CHECK(positive(strides, n), InvalidArgument, layer, ": strides must be ", n, " positive integers");
  NNFIT_CHECK(positive(dilation, n), InvalidArgument, layer, ": dilation_rate must be ", n, " positive integers");
  NNFIT_CHECK(padding == "valid" || padding == "same", InvalidArgument, layer,
              ": padding must be \"valid\" or \"same\", got \"", padding, "\"");
  NNFIT_CHECK(groups > 0, InvalidArgument, layer, ": groups must be positive, got ", groups);
}

std::vector<std::int64_t> ConvWindow::out(const std::string& layer, const std::vector<std::int64_t>& in) const {
  std::vector<std::int64_t> o;
  for (std::size_t i = 0; i < kernel.size(); ++i) {
    if (in[i] == kUnknownDim) {  // known per batch (Note [Shapes known per batch])
      o.push_back(kUnknownDim);
      continue;
    }
    const std::int64_t extent = (kernel[i] - 1) * dilation[i] + 1;
    const Padding1d p = tf_padding(in[i], extent, strides[i], padding);
    NNFIT_CHECK(p.out > 0, InvalidArgument, layer, ": a kernel of ", kernel[i],
                (dilation[i] > 1 ? " dilated by " + std::to_string(dilation[i]) : std::string()),
                " does not fit an input of ", in[i], " along spatial axis ", i, " with padding \"", padding, "\"");
    o.push_back(p.out);
  }
  return o;
}

Attrs ConvWindow::attrs() const {
  Attrs a;
  const bool one = rank() == 1;
  a.set("strides", one ? std::vector<std::int64_t>{1, strides[0]} : strides);
  a.set("padding", padding);
  a.set("dilations", one ? std::vector<std::int64_t>{1, dilation[0]} : dilation);
  a.set("groups", groups);
  return a;
}

int ConvWindow::to_2d(Graph& g, int x, const std::string& name) const {
  if (rank() == 2) return x;
  const Shape s = g.desc(x).shape;
  return emit_reshape(g, x, {s[0], 1, s[1], s[2]}, name);
}

int ConvWindow::from_2d(Graph& g, int y, const std::string& name) const {
  if (rank() == 2) return y;
  const Shape s = g.desc(y).shape;
  return emit_reshape(g, y, {s[0], s[2], s[3]}, name);
}

int ConvWindow::kernel_to_2d(Graph& g, int w, const std::string& name) const {
  if (rank() == 2) return w;
  const Shape s = g.desc(w).shape;
  return emit_reshape(g, w, {1, s[0], s[1], s[2]}, name);
}

// Keras's checks: filters and the input's channels are multiples of groups.
void check_groups(const std::string& layer, std::int64_t groups, std::int64_t filters, std::int64_t channels) {
  NNFIT_CHECK(filters % groups == 0, InvalidArgument, layer, ": filters (", filters,
              ") must be a multiple of groups (", groups, ")");
  NNFIT_CHECK(channels < 0 || channels % groups == 0, InvalidArgument, layer, ": the input's ", channels,
              " channels must be a multiple of groups (", groups, ")");
}

std::vector<std::int64_t> spatial_dims(const Shape& sample) {
  std::vector<std::int64_t> d = sample.dims();
  if (!d.empty()) d.pop_back();
  return d;
}

}  // namespace nnfit
