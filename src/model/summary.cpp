// Model::summary(): Keras 3's table, box-drawn, with parameter counts and sizes.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "nnfit/model/model.h"

namespace nnfit {

namespace {

std::string with_commas(std::int64_t n) {
  std::string s = std::to_string(n), out;
  int count = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (count && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return out;
}

std::string human_bytes(std::int64_t b) {
  char buf[32];
  if (b >= 1024ll * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GB", static_cast<double>(b) / (1024.0 * 1024 * 1024));
  else if (b >= 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f MB", static_cast<double>(b) / (1024.0 * 1024));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.2f KB", static_cast<double>(b) / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.2f B", static_cast<double>(b));
  return buf;
}

std::string repeat(const char* s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Pads to `width` display columns (UTF-8: a column per code point; the text is ASCII but
// for the box characters and a wrapped cell's "…").
std::string pad(const std::string& s, int width, bool right) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  if (n >= width) return s;
  return right ? std::string(static_cast<std::size_t>(width - n), ' ') + s : s + std::string(static_cast<std::size_t>(width - n), ' ');
}

// The lines rich (Keras's summary table, whose columns overflow with an ellipsis) wraps
// `text` into at `width` columns, as Keras prints a Sequential's table without a terminal
// (80 columns, the widths below) (rich/_wrap.py divide_line without folding, then each line
// right-stripped and cut to `width` with a final "…"): words are runs of non-space with the
// spaces after them; a word that does not fit starts a new line.
std::vector<std::string> wrap_cell(const std::string& text, int width) {
  std::vector<std::size_t> breaks;
  std::size_t offset = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find_first_not_of(' ', start);
    end = end == std::string::npos ? text.size() : text.find(' ', end);
    end = end == std::string::npos ? text.size() : text.find_first_not_of(' ', end);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    const std::size_t length = word.find_last_not_of(' ') + 1;
    const std::size_t w = static_cast<std::size_t>(width);
    if (w - std::min(offset, w) >= length) {
      offset += word.size();
    } else if (length > w) {  // alone on its line, cut below
      if (start) breaks.push_back(start);
      offset = word.size();
    } else if (offset && start) {
      breaks.push_back(start);
      offset = word.size();
    }
    start = end;
  }
  std::vector<std::string> lines;
  std::size_t from = 0;
  breaks.push_back(text.size());
  for (std::size_t b : breaks) {
    std::string line = text.substr(from, b - from);
    line.erase(line.find_last_not_of(' ') + 1);
    if (line.size() > static_cast<std::size_t>(width)) line = line.substr(0, static_cast<std::size_t>(width - 1)) + "\u2026";
    lines.push_back(line);
    from = b;
  }
  return lines;
}

// Keras 3's summary_utils: a Functional model whose graph is one chain (one input, one
// output, every call reading one tensor that no other call reads, no layer called twice) is
// "sequential-like", shown without the Connected to column and at Sequential's widths.
bool sequential_like(const LayerGraph& graph) {
  if (graph.inputs().size() != 1 || graph.outputs().size() != 1) return false;
  std::vector<int> reads(graph.nodes().size(), 0);
  for (const LayerNode& n : graph.nodes()) {
    if (!n.layer) continue;
    if (n.inputs.size() != 1 || n.call_index != 0) return false;
    if (++reads[static_cast<std::size_t>(n.inputs[0].node)] > 1) return false;
  }
  return true;
}

}  // namespace

std::string Model::summary(int columns) {
  build();
  const bool functional = class_name() != "Sequential" && !sequential_like(graph_);
  const bool wide = functional && columns - 4 >= 108;  // Keras's Functional line_length
  const bool input_rows = class_name() != "Sequential";
  // Keras's widths without a terminal (80 columns: line_length 76 at summary_utils's
  // positions, as rich lays the columns out).
  const int w1 = wide ? 30 : functional ? 21 : 33, w2 = wide ? 22 : functional ? 19 : 24,
            w3 = wide ? 11 : functional ? 12 : 15, w4 = wide ? 24 : 19;
  const std::vector<int> widths = functional ? std::vector<int>{w1, w2, w3, w4} : std::vector<int>{w1, w2, w3};
  auto rule = [&](const char* left, const char* fill, const char* mid, const char* right) {
    std::string out = left;
    for (std::size_t i = 0; i < widths.size(); ++i) out += repeat(fill, widths[i]) + (i + 1 < widths.size() ? mid : right);
    return out + "\n";
  };
  auto row = [&](const std::vector<std::string>& cells, const char* bar) {
    std::string out;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const bool right = i == 2;
      out += std::string(bar) + " " + pad(cells[i], widths[i] - (right ? 2 : 1), right) + (right ? " " : "");
    }
    return out + bar + "\n";
  };
  auto shape_text = [](const Shape& s) {
    std::string out = "(None";
    for (std::int64_t d : s.dims()) out += ", " + (d < 0 ? std::string("None") : std::to_string(d));  // known per batch
    return out + ")";
  };

  std::string out = "Model: \"" + name_ + "\"\n";
  out += rule("\u250f", "\u2501", "\u2533", "\u2513");
  std::vector<std::string> head{"Layer (type)", "Output Shape", "Param #"};
  if (functional) head.push_back("Connected to");
  out += row(head, "\u2503");
  out += rule("\u2521", "\u2501", "\u2547", "\u2529");

  const auto shapes = graph_.infer_shapes();
  const auto& nodes = graph_.nodes();
  auto node_name = [&](const LayerNode& n) {
    return n.layer ? n.layer->name() : graph_.inputs()[static_cast<std::size_t>(n.input_index)].name;
  };
  // One row per input (Functional) and per layer, with the first call's output shape; a
  // shared layer lists the inputs of every call.
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < nodes.size() && input_rows; ++i) {
    if (!nodes[i].layer) rows.push_back({node_name(nodes[i]) + " (InputLayer)", shape_text(shapes[i][0]), "0", "-"});
  }
  // Under a policy other than float32 each layer's type names the dtype it computes in.
  const auto compute_of = [&](const Layer& l) {
    return l.computes_in_float32() ? DType::f32 : l.dtype_policy().value_or(dtype_policy_).compute;
  };
  bool mixed = false;
  for (const auto& layer : graph_.layers()) mixed = mixed || compute_of(*layer) != DType::f32;
  for (const auto& layer : graph_.layers()) {
    const std::string type =
        layer->type_name() + (mixed ? ", " + std::string(dtype_name(compute_of(*layer))) : std::string());
    std::vector<std::string> r{layer->name() + " (" + type + ")", "", with_commas(layer->count_params()), ""};
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].layer != layer.get()) continue;
      if (r[1].empty()) {
        for (const Shape& s : shapes[i]) r[1] += (r[1].empty() ? "" : ", ") + shape_text(s);
      }
      std::vector<TensorRef> reads = nodes[i].inputs;
      for (const TensorRef& m : nodes[i].masks) {
        if (m.node >= 0) reads.push_back(m);  // Keras lists a mask= argument too
      }
      for (const TensorRef& in : reads) {
        const LayerNode& src = nodes[static_cast<std::size_t>(in.node)];
        // Appended piece by piece (GCC 12 warns falsely, -Wrestrict, on the one-expression form).
        if (!r[3].empty()) r[3] += wide ? "\n" : ", ";  // Keras's get_connections, wrapped by rich; wide: a row each
        r[3] += node_name(src);
        r[3] += '[' + std::to_string(src.call_index) + "][" + std::to_string(in.index) + ']';
      }
    }
    rows.push_back(std::move(r));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // A cell wider than its column (Connected to's inputs, a long name) continues on rows of
    // its own, as rich's table wraps it.
    std::vector<std::vector<std::string>> cells(widths.size());
    std::size_t height = 1;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string& all = rows[i][c];
      for (std::size_t at = 0;;) {
        const std::size_t nl = all.find('\n', at);
        const std::string part = all.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        // The wide layout's widths are not rich's, so a long cell there overflows its column, whole.
        for (std::string& line : wide ? std::vector<std::string>{part} : wrap_cell(part, widths[c] - 2)) {
          cells[c].push_back(std::move(line));
        }
        if (nl == std::string::npos) break;
        at = nl + 1;
      }
      height = std::max(height, cells[c].size());
    }
    for (std::size_t k = 0; k < height; ++k) {
      std::vector<std::string> line(widths.size());
      for (std::size_t c = 0; c < widths.size(); ++c) line[c] = k < cells[c].size() ? cells[c][k] : "";
      out += row(line, "\u2502");
    }
    if (i + 1 < rows.size()) out += rule("\u251c", "\u2500", "\u253c", "\u2524");
  }
  out += rule("\u2514", "\u2500", "\u2534", "\u2518");
  // Bytes as Keras counts them, by each variable's dtype (a Normalization's int64 count is 8).
  std::int64_t trainable = 0, frozen = 0, trainable_bytes = 0, frozen_bytes = 0;
  for (const Weight* w : graph_.saved_weights()) {
    const std::int64_t n = w->value.numel(), bytes = n * static_cast<std::int64_t>(dtype_size(w->value.dtype()));
    (w->trains() ? trainable : frozen) += n;
    (w->trains() ? trainable_bytes : frozen_bytes) += bytes;
  }
  out += " Total params: " + with_commas(trainable + frozen) + " (" + human_bytes(trainable_bytes + frozen_bytes) + ")\n";
  out += " Trainable params: " + with_commas(trainable) + " (" + human_bytes(trainable_bytes) + ")\n";
  out += " Non-trainable params: " + with_commas(frozen) + " (" + human_bytes(frozen_bytes) + ")\n";
  if (mixed || dtype_policy_.name != "float32") {
    out += " Dtype policy: " + dtype_policy_.name + " (variables float32; each layer computes in the dtype beside "
           "its type; nnfit plan --dtype-policy shows the memory it saves)\n";
  }
  return out;
}

}  // namespace nnfit
