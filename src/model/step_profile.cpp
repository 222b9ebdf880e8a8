// step_profile.h: ops.json and pipeline.json (Note [Step breakdown]).
#include "model/step_profile.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "nnfit/graph/op_def.h"

namespace nnfit::step_profile {
namespace {

// Multiply-adds x 2 of the ops whose cost is their arithmetic (matmul, convolution and
// their gradients), from the shapes; 0 for the others (bandwidth-bound elementwise ops).
double node_flops(const Graph& g, const Node& n) {
  auto desc = [&](int v) -> const Shape& { return g.desc(v).shape; };
  if ((n.op == "matmul" || n.op == "fused_matmul") && n.inputs.size() >= 2) {
    const Shape& a = desc(n.inputs[0]);
    if (a.rank() < 2) return 0;
    const std::int64_t k = n.attrs.i_or("transpose_a", 0) ? a.dim(-2) : a.dim(-1);
    return 2.0 * static_cast<double>(desc(n.outputs[0]).numel()) * static_cast<double>(k);
  }
  // A convolution's multiply-adds per output element (forward) or per dy element (either
  // gradient): the filter's size past its output axis. The filter is HWIO (conv2d family)
  // or DHWIO (conv3d family).
  auto per_element = [](const Shape& w) {
    double k = 1;
    for (int i = 0; i + 1 < w.rank(); ++i) k *= static_cast<double>(w[i]);
    return k;
  };
  auto is = [&](const std::string& op) { return n.op == op + "2d" || n.op == op + "3d"; };
  auto is_pass = [&](const std::string& pass) { return n.op == "conv2d" + pass || n.op == "conv3d" + pass; };
  if ((is("conv") || is("fused_conv")) && n.inputs.size() >= 2) {
    const Shape& w = desc(n.inputs[1]);  // (D)HWIO
    if (w.rank() != 4 && w.rank() != 5) return 0;
    return 2.0 * static_cast<double>(desc(n.outputs[0]).numel()) * per_element(w);
  }
  if (is_pass("_backprop_input") && n.inputs.size() >= 2) {  // (dy, kernel)
    const Shape& w = desc(n.inputs[1]);
    if (w.rank() != 4 && w.rank() != 5) return 0;
    return 2.0 * static_cast<double>(desc(n.inputs[0]).numel()) * per_element(w);
  }
  if (is_pass("_backprop_filter") && n.inputs.size() >= 2) {  // (x, dy) -> dkernel (D)HWIO
    const Shape& w = desc(n.outputs[0]);
    if (w.rank() != 4 && w.rank() != 5) return 0;
    return 2.0 * static_cast<double>(desc(n.inputs[1]).numel()) * per_element(w);
  }
  return 0;
}

// Bytes a node's kernel reads and writes per call, from the planned shapes: every input
// once, every output once, and every input the op mutates (optimizer slots, moving
// averages) once more for its write back, so Adam's update of a parameter is 7 of its
// sizes (param, grad, m, v read; param, m, v written). An output the planner placed on
// its input's buffer (a reshape; `aliased`) is that input: not counted again, and a node
// whose outputs all alias moves nothing. A lower bound on the traffic: a kernel that
// re-reads tiles from memory, or uses a workspace, moves more.
double node_bytes(const Graph& g, const Node& n, const std::vector<bool>& aliased) {
  auto size = [&](int v) { return static_cast<double>(g.desc(v).bytes()); };
  double out_bytes = 0;
  bool all_alias = !n.outputs.empty();
  for (int v : n.outputs) {
    if (aliased[static_cast<std::size_t>(v)]) continue;
    all_alias = false;
    out_bytes += size(v);
  }
  if (all_alias) return 0;
  double bytes = out_bytes;
  for (int v : n.inputs) bytes += size(v);
  for (int i : op_def(n.op).mutated_inputs) {
    if (static_cast<std::size_t>(i) < n.inputs.size()) bytes += size(n.inputs[static_cast<std::size_t>(i)]);
  }
  return bytes;
}

// Per value of `prog`: whether it lives in another value's arena slot (Note [One arena per
// program]: variables are bound outside the arena, every other value has its own slot
// unless the planner aliased it).
std::vector<bool> aliased_values(const Program& prog) {
  const Graph& g = prog.graph();
  std::vector<bool> own(static_cast<std::size_t>(g.num_values()), false);
  for (const ArenaSlot& s : prog.slots()) {
    if (s.value >= 0) own[static_cast<std::size_t>(s.value)] = true;
  }
  std::vector<bool> aliased(own.size(), false);
  for (int v = 0; v < g.num_values(); ++v) {
    aliased[static_cast<std::size_t>(v)] = g.value(v).kind != ValueKind::variable && !own[static_cast<std::size_t>(v)];
  }
  return aliased;
}

// Writes `text` to `path` through `path.tmp` and a rename (a reader never sees half a file).
void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw DataError(tmp, -1, "cannot open for writing");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw DataError(tmp, -1, "write failed");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw DataError(path, -1, "cannot rename " + tmp + " onto it");
}

const char* phase_name(StepPhase p) {
  return p == StepPhase::forward ? "forward" : p == StepPhase::backward ? "backward" : "update";
}

}  // namespace

// LOG_DIR/ops.json: every node of the timed training programs, summed over programs by
// name (a partial last batch has its own program, so do micro-batch sizes); docs/cli.md
// describes the keys.
void write_ops_json(const std::string& path, const std::vector<TimedProgram>& timed, std::int64_t steps,
                    int threads, const std::string& device) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  std::map<std::string, std::size_t> index;
  for (const TimedProgram& tp : timed) {
    const Program& prog = *tp.program;
    const std::vector<bool> aliased = aliased_values(prog);
    for (std::size_t i = 0; i < prog.steps().size(); ++i) {
      const PlannedStep& st = prog.steps()[i];
      const Node& node = prog.graph().node(st.node);
      auto [it, added] = index.emplace(node.name, ops.size());
      if (added) {
        ops.push_back({{"name", node.name}, {"op", node.op}, {"impl", st.impl},
                       {"phase", phase_name(tp.update_only ? StepPhase::update : prog.phase(i))}, {"calls", 0}, {"seconds", 0.0}, {"flops", 0.0}, {"bytes", 0.0}});
      }
      nlohmann::ordered_json& o = ops[it->second];
      o["calls"] = o["calls"].get<std::int64_t>() + tp.runs;
      o["seconds"] = o["seconds"].get<double>() + prog.step_seconds()[i];
      o["flops"] = o["flops"].get<double>() + node_flops(prog.graph(), node) * static_cast<double>(tp.runs);
      o["bytes"] = o["bytes"].get<double>() + node_bytes(prog.graph(), node, aliased) * static_cast<double>(tp.runs);
    }
  }
  nlohmann::ordered_json doc = {{"threads", threads}, {"device", device}, {"steps", steps}, {"ops", ops}};
  write_file_atomically(path, doc.dump(1) + "\n");
}

// LOG_DIR/pipeline.json: the training pipeline's measure() points after `epoch`.
void write_pipeline_json(const std::string& path,
                         const std::vector<std::pair<std::string, std::shared_ptr<data::StageStats>>>& stages,
                         std::int64_t epoch) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& [name, st] : stages) {
    if (!st) continue;
    list.push_back({{"name", name},
                    {"elements", st->elements.load()},
                    {"elements_per_s", st->elements_per_second()},
                    {"next_seconds", static_cast<double>(st->wait_ns.load()) * 1e-9}});
  }
  nlohmann::ordered_json doc = {{"epochs", epoch + 1}, {"stages", list}};
  write_file_atomically(path, doc.dump(1) + "\n");
}

}  // namespace nnfit::step_profile
