// Model::summary(): Keras 3's table, box-drawn (Table) over its rows (SummaryRows), with
// parameter counts and sizes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "nnfit/core/error.h"
#include "nnfit/model/model.h"
#include "nnfit/model/summary_options.h"
#include "nnfit/nn/nested_model.h"

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

// Display columns of UTF-8 text: one per code point (the text is ASCII but for the box
// characters, a nested row's "└" and a cut cell's "…").
std::size_t columns_of(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// The lines rich (Keras's summary table, whose columns overflow with an ellipsis) wraps
// `text` into at `width` columns, as Keras prints a Sequential's table without a terminal
// (80 columns, the widths below) (rich/_wrap.py divide_line without folding, then each line
// right-stripped and cut to `width` with a final "…"): words are runs of non-space with the
// spaces after them; a word that does not fit starts a new line.
std::vector<std::string> wrap_cell(const std::string& text, int width) {
  std::vector<std::size_t> breaks;
  std::size_t offset = 0;
  const std::size_t w = static_cast<std::size_t>(width);
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find_first_not_of(' ', start);
    end = end == std::string::npos ? text.size() : text.find(' ', end);
    end = end == std::string::npos ? text.size() : text.find_first_not_of(' ', end);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    const std::size_t length = columns_of(word.substr(0, word.find_last_not_of(' ') + 1)), size = columns_of(word);
    if (w - std::min(offset, w) >= length) {
      offset += size;
    } else if (length > w) {  // alone on its line, cut below
      if (start) breaks.push_back(start);
      offset = size;
    } else if (offset && start) {
      breaks.push_back(start);
      offset = size;
    }
    start = end;
  }
  std::vector<std::string> lines;
  std::size_t from = 0;
  breaks.push_back(text.size());
  for (std::size_t b : breaks) {
    std::string line = text.substr(from, b - from);
    line.erase(line.find_last_not_of(' ') + 1);
    if (columns_of(line) > w) {  // cut to width - 1 columns and "…"
      std::size_t bytes = 0;
      for (std::size_t n = 0; n + 1 < w && bytes < line.size(); ++n) {
        do ++bytes; while (bytes < line.size() && (static_cast<unsigned char>(line[bytes]) & 0xC0) == 0x80);
      }
      line = line.substr(0, bytes) + "\u2026";
    }
    lines.push_back(line);
    from = b;
  }
  return lines;
}

// `text` in `width` columns, as rich justifies a cell: left, right, or centred with the odd
// column on the right.
std::string justify(const std::string& text, int width, bool right, bool centred) {
  const int n = static_cast<int>(columns_of(text));
  if (n >= width) return text;
  const int excess = width - n;
  const int before = right ? excess : centred ? excess / 2 : 0;
  return std::string(static_cast<std::size_t>(before), ' ') + text + std::string(static_cast<std::size_t>(excess - before), ' ');
}

// The columns' widths (with their one-column padding on each side, between the borders) as
// Keras's print_summary asks rich for them and rich gives them: Keras cuts line_length
// (its layout's default, plus 12 with the Trainable column, narrowed to the terminal's
// columns - 4) at `positions` (scaled by 0.9 to make room for Trainable); rich pads each by
// 2 and, when the table would pass line_length, takes the excess off every column alike
// (rich's ratio_reduce, Python's round: halves to even).
std::vector<int> column_widths(bool functional, int columns, const SummaryOptions& options) {
  int line_length = functional ? 108 : 88;
  std::vector<double> positions = functional ? std::vector<double>{0.3, 0.56, 0.74, 1.0} : std::vector<double>{0.45, 0.80, 1.0};
  if (!options.positions.empty()) positions = options.positions;
  if (options.show_trainable) {
    line_length += 12;
    for (double& p : positions) p *= 0.90;
    positions.push_back(1.0);
  }
  line_length = std::min(line_length, columns - 4);
  if (options.line_length > 0) line_length = options.line_length;
  std::vector<int> widths;
  int current = 0;
  for (double p : positions) {
    const int width = static_cast<int>(p * line_length) - current;
    NNFIT_CHECK(width >= 4, InvalidArgument, "summary: insufficient console width to print summary (a column of ",
                width, " at line_length ", line_length, "; give a larger line_length)");
    widths.push_back(width + 2);
    current += width;
  }
  int excess = -(line_length - static_cast<int>(widths.size()) - 1);
  for (int w : widths) excess += w;
  if (excess > 0) {
    int ratio_left = static_cast<int>(widths.size());
    for (int& w : widths) {
      const int take = std::min(w, static_cast<int>(std::nearbyint(static_cast<double>(excess) / ratio_left)));
      w -= take;
      excess -= take;
      --ratio_left;
    }
  }
  return widths;
}

// Each line of `text` cut to `columns` display columns, as rich's console prints a table
// wider than itself.
std::string cropped(const std::string& text, int columns) {
  std::string out;
  for (std::size_t from = 0; from < text.size();) {
    std::size_t nl = text.find('\n', from);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(from, nl - from);
    std::size_t bytes = 0;
    for (int n = 0; n < columns && bytes < line.size(); ++n) {
      do ++bytes; while (bytes < line.size() && (static_cast<unsigned char>(line[bytes]) & 0xC0) == 0x80);
    }
    out += line.substr(0, bytes);
    if (nl < text.size()) out += '\n';
    from = nl + 1;
  }
  return out;
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

// Keras's shape text: "(None, 28, 28, 1)", None for the batch and a dimension known per batch.
std::string shape_text(const Shape& s) {
  std::string out = "(None";
  for (std::int64_t d : s.dims()) out += ", " + (d < 0 ? std::string("None") : std::to_string(d));  // known per batch
  return out + ")";
}

// The box drawing of one summary table, as rich draws Keras's: the columns' widths (with
// their padding) and alignments.
struct Table {
  std::vector<int> widths;
  std::vector<bool> right, centred;

  Table(std::vector<int> w, bool show_trainable)
      : widths(std::move(w)), right(widths.size(), false), centred(widths.size(), false) {
    right[2] = true;
    if (show_trainable) centred.back() = true;
  }
  std::string rule(const char* left, const char* fill, const char* mid, const char* end) const {
    std::string out = left;
    for (std::size_t i = 0; i < widths.size(); ++i) out += repeat(fill, widths[i]) + (i + 1 < widths.size() ? mid : end);
    return out + "\n";
  }
  std::string row(const std::vector<std::string>& cells, const char* bar) const {
    std::string out;
    for (std::size_t i = 0; i < widths.size(); ++i) out += std::string(bar) + " " + justify(cells[i], widths[i] - 2, right[i], centred[i]) + " ";
    return out + bar + "\n";
  }
  // Header cells wrap as body cells do ("Trai…"), aligned to the header row's bottom as rich does.
  std::string header(const std::vector<std::string>& head) const {
    std::vector<std::vector<std::string>> head_lines(head.size());
    std::size_t head_height = 1;
    for (std::size_t c = 0; c < head.size(); ++c) {
      head_lines[c] = wrap_cell(head[c], widths[c] - 2);
      head_height = std::max(head_height, head_lines[c].size());
    }
    std::string out;
    for (std::size_t h = 0; h < head_height; ++h) {
      std::vector<std::string> line(head.size());
      for (std::size_t c = 0; c < head.size(); ++c) {
        const std::size_t blank = head_height - head_lines[c].size();
        line[c] = h < blank ? "" : head_lines[c][h - blank];
      }
      out += row(line, "\u2503");
    }
    return out;
  }
  // A cell wider than its column (Connected to's inputs, a long name) continues on rows of
  // its own, as rich's table wraps it.
  std::string body_row(const std::vector<std::string>& cells_of_row) const {
    std::vector<std::vector<std::string>> cells(widths.size());
    std::size_t height = 1;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      cells[c] = wrap_cell(cells_of_row[c], widths[c] - 2);
      height = std::max(height, cells[c].size());
    }
    std::string out;
    for (std::size_t h = 0; h < height; ++h) {
      std::vector<std::string> line(widths.size());
      for (std::size_t c = 0; c < widths.size(); ++c) line[c] = h < cells[c].size() ? cells[c][h] : "";
      out += row(line, "\u2502");
    }
    return out;
  }
};

// The table's body: one row per input (Functional) and per layer, with the first call's
// output shape; a shared layer lists the inputs of every call. With expand_nested, a nested
// model's layers follow it, indented as Keras's "   └ " per level, with "-" for their
// connections. `top_level[i]`: the top-level row row i belongs to (layer_range).
class SummaryRows {
 public:
  SummaryRows(const LayerGraph& graph, const DTypePolicy& policy, bool functional, bool show_trainable)
      : graph_(graph), policy_(policy), functional_(functional), show_trainable_(show_trainable) {
    for (const auto& layer : graph_.layers()) mixed_ = mixed_ || compute_of(*layer) != DType::f32;
  }
  // Under a policy other than float32 each layer's type names the dtype it computes in.
  bool mixed() const { return mixed_; }
  // Fills the rows; returns the number of top-level rows.
  std::size_t add_model(bool input_rows, bool expand_nested);

  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> top_level;

 private:
  DType compute_of(const Layer& l) const {
    return l.computes_in_float32() ? DType::f32 : l.dtype_policy().value_or(policy_).compute;
  }
  static std::string trainable_cell(const Layer& l, bool trains) {
    return const_cast<Layer&>(l).all_weights().empty() ? std::string("-") : std::string(trains ? "Y" : "N");
  }
  std::string node_name(const LayerNode& n) const {
    return n.layer ? n.layer->name() : graph_.inputs()[static_cast<std::size_t>(n.input_index)].name;
  }
  void add_layer(const Layer& layer, const std::vector<std::vector<Shape>>& shapes);
  void add_nested(const NestedModel& model, int level, bool trains);

  const LayerGraph& graph_;
  const DTypePolicy& policy_;
  bool functional_, show_trainable_, mixed_ = false;
};

std::size_t SummaryRows::add_model(bool input_rows, bool expand_nested) {
  const auto shapes = graph_.infer_shapes();
  const auto& nodes = graph_.nodes();
  std::size_t top = 0;
  for (std::size_t i = 0; i < nodes.size() && input_rows; ++i) {
    if (nodes[i].layer) continue;
    std::vector<std::string> r{node_name(nodes[i]) + " (InputLayer)", shape_text(shapes[i][0]), "0"};
    if (functional_) r.push_back("-");
    if (show_trainable_) r.push_back("-");
    rows.push_back(std::move(r));
    top_level.push_back(top++);
  }
  for (const auto& layer : graph_.layers()) {
    add_layer(*layer, shapes);
    top_level.push_back(top++);
    if (const auto* nested = dynamic_cast<const NestedModel*>(layer.get()); nested && expand_nested) {
      add_nested(*nested, 1, layer->trainable());
    }
  }
  return top;
}

void SummaryRows::add_layer(const Layer& layer, const std::vector<std::vector<Shape>>& shapes) {
  const auto& nodes = graph_.nodes();
  const std::string type = layer.type_name() + (mixed_ ? ", " + std::string(dtype_name(compute_of(layer))) : std::string());
  std::vector<std::string> r{layer.name() + " (" + type + ")", "", with_commas(layer.count_params()), ""};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].layer != &layer) continue;
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
      if (!r[3].empty()) r[3] += ", ";  // Keras's get_connections
      r[3] += node_name(src);
      r[3] += '[' + std::to_string(src.call_index) + "][" + std::to_string(in.index) + ']';
    }
  }
  if (!functional_) r.pop_back();
  if (show_trainable_) r.push_back(trainable_cell(layer, layer.trainable()));
  rows.push_back(std::move(r));
}

void SummaryRows::add_nested(const NestedModel& model, int level, bool trains) {
  const LayerGraph& g = model.graph();
  const auto inner_shapes = g.infer_shapes();
  const std::string prefix = repeat("   ", level) + "\u2514 ";
  for (std::size_t i = 0; i < g.nodes().size() && model.class_name() != "Sequential"; ++i) {
    // Keras's model.layers of a nested Functional model lists its InputLayers first.
    const LayerNode& n = g.nodes()[i];
    if (n.layer) continue;
    std::vector<std::string> r{prefix + g.inputs()[static_cast<std::size_t>(n.input_index)].name + " (InputLayer)",
                               shape_text(inner_shapes[i][0]), "0"};
    if (functional_) r.push_back("-");
    if (show_trainable_) r.push_back("-");
    rows.push_back(std::move(r));
    top_level.push_back(top_level.back());
  }
  for (const auto& layer : g.layers()) {
    const bool t = trains && layer->trainable();
    std::vector<std::string> r{prefix + layer->name() + " (" + layer->type_name() + ")", "", with_commas(layer->count_params())};
    for (std::size_t i = 0; i < g.nodes().size(); ++i) {
      if (g.nodes()[i].layer != layer.get() || !r[1].empty()) continue;
      for (const Shape& s : inner_shapes[i]) r[1] += (r[1].empty() ? "" : ", ") + shape_text(s);
    }
    if (functional_) r.push_back("-");
    if (show_trainable_) r.push_back(trainable_cell(*layer, t));
    rows.push_back(std::move(r));
    top_level.push_back(top_level.empty() ? 0 : top_level.back());
    if (const auto* nested = dynamic_cast<const NestedModel*>(layer.get())) add_nested(*nested, level + 1, t);
  }
}

// The lines under the table: parameter counts with bytes as Keras counts them, by each
// variable's dtype (a Normalization's int64 count is 8), and the dtype policy when it matters.
std::string params_footer(const LayerGraph& graph, const DTypePolicy& policy, bool mixed) {
  std::int64_t trainable = 0, frozen = 0, trainable_bytes = 0, frozen_bytes = 0;
  for (const Weight* w : graph.saved_weights()) {
    const std::int64_t n = w->value.numel(), bytes = n * static_cast<std::int64_t>(dtype_size(w->value.dtype()));
    (w->trains() ? trainable : frozen) += n;
    (w->trains() ? trainable_bytes : frozen_bytes) += bytes;
  }
  std::string out;
  out += " Total params: " + with_commas(trainable + frozen) + " (" + human_bytes(trainable_bytes + frozen_bytes) + ")\n";
  out += " Trainable params: " + with_commas(trainable) + " (" + human_bytes(trainable_bytes) + ")\n";
  out += " Non-trainable params: " + with_commas(frozen) + " (" + human_bytes(frozen_bytes) + ")\n";
  if (mixed || policy.name != "float32") {
    out += " Dtype policy: " + policy.name + " (variables float32; each layer computes in the dtype beside "
           "its type; nnfit plan --dtype-policy shows the memory it saves)\n";
  }
  return out;
}

}  // namespace

std::string Model::summary(int columns) { return summary(columns, SummaryOptions{}); }

std::string Model::summary(int columns, const SummaryOptions& options) {
  build();
  const bool functional = class_name() != "Sequential" && !sequential_like(graph_);
  const Table table(column_widths(functional, columns, options), options.show_trainable);

  std::string out = "Model: \"" + name_ + "\"\n";
  out += table.rule("\u250f", "\u2501", "\u2533", "\u2513");
  std::vector<std::string> head{"Layer (type)", "Output Shape", "Param #"};
  if (functional) head.push_back("Connected to");
  if (options.show_trainable) head.push_back("Trainable");
  out += table.header(head);
  out += table.rule("\u2521", "\u2501", "\u2547", "\u2529");

  SummaryRows rows(graph_, dtype_policy_, functional, options.show_trainable);
  const std::size_t top = rows.add_model(class_name() != "Sequential", options.expand_nested);
  const std::size_t first = options.first_row, last = options.last_row ? options.last_row : top;
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < rows.rows.size(); ++i) {
    if (rows.top_level[i] >= first && rows.top_level[i] < last) shown.push_back(i);
  }
  for (std::size_t k = 0; k < shown.size(); ++k) {
    out += table.body_row(rows.rows[shown[k]]);
    if (k + 1 < shown.size()) out += table.rule("\u251c", "\u2500", "\u253c", "\u2524");
  }
  out += table.rule("\u2514", "\u2500", "\u2534", "\u2518");
  out = cropped(out, columns);  // a line_length past the terminal: rich's console cuts each line there
  return out + params_footer(graph_, dtype_policy_, rows.mixed());
}

}  // namespace nnfit
