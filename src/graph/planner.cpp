// The planner: schedule, kernel selection, liveness with reshape aliasing, and offset
// assignment (greedy by size, lowest fitting offset among live-overlapping slots, as in
// TFLite's arena planner and XLA's heap simulator).
#include <algorithm>
#include <numeric>
#include <queue>

#include "nnfit/backend/kernel_registry.h"
#include "nnfit/core/error.h"
#include "nnfit/graph/op_def.h"
#include "nnfit/graph/program.h"

namespace nnfit {

namespace {

bool mutates(const Node& node, int value) {
  for (int idx : op_def(node.op).mutated_inputs) {
    if (static_cast<std::size_t>(idx) < node.inputs.size() && node.inputs[static_cast<std::size_t>(idx)] == value) {
      return true;
    }
  }
  return false;
}

// Kahn's algorithm over data edges plus "every other reader of a mutated value runs before
// the mutator" edges (mutators of one value in creation order); ties go to the lower node
// id, so creation order is kept.
std::vector<int> schedule(const Graph& g) {
  const int nn = g.num_nodes();
  std::vector<std::vector<int>> succ(static_cast<std::size_t>(nn));
  std::vector<int> indeg(static_cast<std::size_t>(nn), 0);
  auto edge = [&](int a, int b) {
    succ[static_cast<std::size_t>(a)].push_back(b);
    ++indeg[static_cast<std::size_t>(b)];
  };
  std::vector<std::vector<int>> readers = g.consumers();
  for (int n = 0; n < nn; ++n) {
    const Node& node = g.node(n);
    if (node.removed) continue;
    for (int v : node.inputs) {
      int p = g.value(v).producer;
      if (p >= 0) edge(p, n);
    }
    for (int idx : op_def(node.op).mutated_inputs) {
      if (static_cast<std::size_t>(idx) >= node.inputs.size()) continue;
      const int value = node.inputs[static_cast<std::size_t>(idx)];
      for (int r : readers[static_cast<std::size_t>(value)]) {
        // Two mutators of one value (an update, then a constraint's projection) run in
        // creation order: the later one counts as the reader.
        if (r != n && (r < n || !mutates(g.node(r), value))) edge(r, n);
      }
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int n = 0; n < nn; ++n) {
    if (!g.node(n).removed && indeg[static_cast<std::size_t>(n)] == 0) ready.push(n);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    int n = ready.top();
    ready.pop();
    order.push_back(n);
    for (int s : succ[static_cast<std::size_t>(n)]) {
      if (--indeg[static_cast<std::size_t>(s)] == 0) ready.push(s);
    }
  }
  int live = 0;
  for (int n = 0; n < nn; ++n) live += g.node(n).removed ? 0 : 1;
  NNFIT_CHECK(static_cast<int>(order.size()) == live, InvalidArgument,
              "the graph has a cycle (an update reads a value it also writes)");
  return order;
}

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

void assign_offsets(std::vector<ArenaSlot>& slots, std::size_t& arena_bytes) {
  std::vector<std::size_t> order(slots.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return slots[a].bytes > slots[b].bytes;
  });
  std::vector<std::size_t> placed;
  arena_bytes = 0;
  for (std::size_t i : order) {
    ArenaSlot& s = slots[i];
    // Collect live-overlapping placed slots sorted by offset; take the first gap that fits,
    // preferring the smallest such gap (best fit).
    std::vector<std::pair<std::size_t, std::size_t>> busy;
    for (std::size_t j : placed) {
      const ArenaSlot& o = slots[j];
      if (o.first_step <= s.last_step && s.first_step <= o.last_step) busy.push_back({o.offset, o.offset + o.bytes});
    }
    std::sort(busy.begin(), busy.end());
    std::size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const auto& [lo, hi] : busy) {
      if (lo >= cursor && lo - cursor >= s.bytes && lo - cursor < best_gap) {
        best = cursor;
        best_gap = lo - cursor;
      }
      cursor = std::max(cursor, hi);
    }
    s.offset = best != SIZE_MAX ? best : cursor;
    arena_bytes = std::max(arena_bytes, s.offset + s.bytes);
    placed.push_back(i);
  }
}

}  // namespace

Program plan(Graph graph, const PlanOptions& options) {
  Program p;
  std::vector<int> order = schedule(graph);
  const std::size_t nv = static_cast<std::size_t>(graph.num_values());
  const int nsteps = static_cast<int>(order.size());

  // Kernels, chosen now so their workspace sizes are known.
  for (int n : order) {
    const Node& node = graph.node(n);
    KernelDesc desc;
    desc.op = node.op;
    desc.attrs = node.attrs;
    desc.node_name = node.name;
    for (int v : node.inputs) desc.inputs.push_back(graph.desc(v));
    for (int v : node.outputs) desc.outputs.push_back(graph.desc(v));
    SelectedKernel sel = (options.registry ? *options.registry : kernel_registry()).select(desc, options.device);
    PlannedStep step;
    step.node = n;
    step.impl = sel.impl_name;
    step.kernel = std::move(sel.kernel);
    step.inputs = node.inputs;
    step.outputs = node.outputs;
    step.workspace_bytes = step.kernel->workspace_bytes();
    p.steps_.push_back(std::move(step));
  }

  // Liveness. Reshape outputs alias their input's root buffer.
  std::vector<int> root(nv);
  std::iota(root.begin(), root.end(), 0);
  std::vector<int> first(nv, nsteps + 1), last(nv, -2);
  for (int v = 0; v < static_cast<int>(nv); ++v) {
    if (graph.value(v).kind == ValueKind::input) first[static_cast<std::size_t>(v)] = -1, last[static_cast<std::size_t>(v)] = -1;
  }
  for (int s = 0; s < nsteps; ++s) {
    const PlannedStep& st = p.steps_[static_cast<std::size_t>(s)];
    bool alias = graph.node(st.node).op == "reshape";
    for (int v : st.inputs) {
      int r = root[static_cast<std::size_t>(v)];
      last[static_cast<std::size_t>(r)] = std::max(last[static_cast<std::size_t>(r)], s);
    }
    for (int v : st.outputs) {
      if (alias && graph.value(st.inputs[0]).kind != ValueKind::variable) {
        root[static_cast<std::size_t>(v)] = root[static_cast<std::size_t>(st.inputs[0])];
        continue;
      }
      first[static_cast<std::size_t>(v)] = std::min(first[static_cast<std::size_t>(v)], s);
      last[static_cast<std::size_t>(v)] = std::max(last[static_cast<std::size_t>(v)], s);
    }
  }
  for (int v : options.keep) last[static_cast<std::size_t>(root[static_cast<std::size_t>(v)])] = nsteps;
  // Inputs stay intact for the whole step: callers fill them once and read them after
  // run() (metrics read the targets), and a rerun sees the same batch.
  for (int v = 0; v < static_cast<int>(nv); ++v) {
    if (graph.value(v).kind == ValueKind::input) last[static_cast<std::size_t>(v)] = nsteps;
  }

  for (int v = 0; v < static_cast<int>(nv); ++v) {
    const Value& val = graph.value(v);
    if (val.kind == ValueKind::variable || root[static_cast<std::size_t>(v)] != v) continue;
    if (last[static_cast<std::size_t>(v)] < -1) continue;  // never produced nor read
    ArenaSlot slot;
    slot.value = v;
    slot.bytes = align_up(std::max<std::size_t>(val.desc.bytes(), 1), options.alignment);
    slot.first_step = first[static_cast<std::size_t>(v)];
    slot.last_step = std::max(last[static_cast<std::size_t>(v)], first[static_cast<std::size_t>(v)]);
    p.slots_.push_back(slot);
  }
  for (int s = 0; s < nsteps; ++s) {
    std::size_t ws = p.steps_[static_cast<std::size_t>(s)].workspace_bytes;
    if (ws == 0) continue;
    ArenaSlot slot;
    slot.step = s;
    slot.bytes = align_up(ws, options.alignment);
    slot.first_step = slot.last_step = s;
    p.slots_.push_back(slot);
  }
  assign_offsets(p.slots_, p.arena_bytes_);

  p.value_offset_.assign(nv, -1);
  for (const ArenaSlot& slot : p.slots_) {
    if (slot.value >= 0) p.value_offset_[static_cast<std::size_t>(slot.value)] = static_cast<long long>(slot.offset);
    else p.steps_[static_cast<std::size_t>(slot.step)].workspace_offset = slot.offset;
  }
  for (int v = 0; v < static_cast<int>(nv); ++v) {
    int r = root[static_cast<std::size_t>(v)];
    if (r != v) p.value_offset_[static_cast<std::size_t>(v)] = p.value_offset_[static_cast<std::size_t>(r)];
  }
  p.graph_ = std::move(graph);
  return p;
}

}  // namespace nnfit
